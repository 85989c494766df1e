/**
 * Captures the golden bytes of kmirror's own protocol requests from a real broker: every version of each API
 * (test/helpers/protocol-scenarios.ts) that both kmirror and the broker speak, the request as sent and the
 * response as received, into test/fixtures/protocol/kafka-<version>.json for golden.test.ts.
 *
 *   node scripts/capture-protocol.ts --bootstrap 127.0.0.1:19092 --broker 4.1.1
 *
 * Then the group and transaction APIs (scripts/capture-coordination.ts): a member joining, syncing, heartbeating and
 * leaving a group, a transactional producer adding a partition and committing, each exchange with the member id,
 * generation or producer id it was built from (its `context`).
 *
 * Run it against a plaintext broker of the named release (scripts/kafka-local.sh up ... VERSION). It creates one
 * topic (golden-<version>-<random>, 1 partition) and leaves it there. Re-run only when a grammar changes or a
 * broker release is added; review the diff of the decoded answers.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Admin, ConnectionPool, Writer, type Connection } from '@platformatic/kafka'
import { decodeResponse, encodeRequest, isFlexible, type ApiSpec } from '../src/kafka/protocol/api.ts'
import { ApiVersionsApi } from '../src/kafka/protocol/api-versions.ts'
import { MetadataApi, type MetadataResponse } from '../src/kafka/protocol/metadata.ts'
import { brokerApis } from '../src/kafka/protocol/negotiation.ts'
import { scenarios, toJson, type GoldenContext, type GoldenTopic } from '../test/helpers/protocol-scenarios.ts'
import { captureCoordination } from './capture-coordination.ts'
import { REPO_ROOT } from '../test/helpers/clusters.ts'

interface Exchange {
  api: string
  version: number
  context?: GoldenContext
  requestHex: string
  responseHex: string
  decoded: unknown
}

/** Sends one request at VERSION and returns the response body's bytes exactly as the broker sent them. */
function exchange (connection: Connection, spec: ApiSpec<unknown, unknown>, version: number, request: unknown): Promise<{ requestHex: string, response: Buffer }> {
  const flexible = isFlexible(spec, version)
  const body = Buffer.concat(encodeRequest(spec, version, request))
  return new Promise((resolve, reject) => {
    connection.send<Buffer>(spec.key, version, () => Writer.create().append(body),
      (_c, _k, _v, reader) => Buffer.from(reader.buffer.buffer.subarray(reader.position)),
      flexible, flexible && spec.responseHeaderAlwaysV0 !== true,
      (error, response) => { if (error) reject(error); else resolve({ requestHex: body.toString('hex'), response: response! }) })
  })
}

async function createGoldenTopic (bootstrap: string, broker: string): Promise<string> {
  const name = `golden-${broker.replaceAll('.', '_')}-${randomBytes(3).toString('hex')}`
  const admin = new Admin({ clientId: 'kmirror-capture', bootstrapBrokers: [bootstrap] })
  try {
    await admin.createTopics({ topics: [name], partitions: 1, replicas: 1 })
  } finally {
    await admin.close()
  }
  return name
}

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { bootstrap: { type: 'string' }, broker: { type: 'string' }, out: { type: 'string' } } })
  if (values.bootstrap === undefined || values.broker === undefined) throw new Error('usage: capture-protocol.ts --bootstrap HOST:PORT --broker VERSION [--out FILE]')
  const name = await createGoldenTopic(values.bootstrap, values.broker)
  const [host, port] = values.bootstrap.split(':') as [string, string]
  const pool = new ConnectionPool('kmirror-capture', { connectTimeout: 10_000, requestTimeout: 30_000 })
  const exchanges: Exchange[] = []
  try {
    const connection = await pool.get({ host, port: Number(port) })
    const apis = await brokerApis(connection)
    let topic: GoldenTopic = { name, id: null }
    for (const scenario of scenarios(topic)) {
      const spec = scenario.spec
      const range = apis.apis.get(spec.key)
      // ApiVersions: every version kmirror may send, also those the broker refuses (its error answer is golden too).
      const low = spec === ApiVersionsApi ? spec.minVersion : Math.max(spec.minVersion, range?.min ?? Infinity)
      const high = spec === ApiVersionsApi ? spec.maxVersion : Math.min(spec.maxVersion, range?.max ?? -1)
      for (let version = low; version <= high; version++) {
        // The topic id is known once Metadata answered: later scenarios (Fetch v13+) need it.
        const current = scenarios(topic).find(s => s.spec === spec)!
        const { requestHex, response } = await exchange(connection, spec, version, current.request)
        const decoded = decodeResponse(spec, version, response)
        if (spec === MetadataApi) topic = { name, id: (decoded as MetadataResponse).topics.get(name)?.id ?? topic.id }
        exchanges.push({ api: spec.name, version, requestHex, responseHex: response.toString('hex'), decoded: toJson(decoded) })
        process.stdout.write(`${spec.name} v${version}: ${response.length} bytes\n`)
      }
    }
    const coordination = await captureCoordination(topic, apis, (spec, version, request) => exchange(connection, spec, version, request),
      (spec, version, response) => decodeResponse(spec, version, response))
    for (const e of coordination) exchanges.push({ ...e, decoded: toJson(e.decoded) })
    const dir = join(REPO_ROOT, 'test', 'fixtures', 'protocol')
    mkdirSync(dir, { recursive: true })
    const out = values.out ?? join(dir, `kafka-${values.broker}.json`)
    writeFileSync(out, `${JSON.stringify({ broker: values.broker, release: apis.release, capturedAt: new Date().toISOString().slice(0, 10), topic, exchanges }, null, 1)}\n`)
    process.stdout.write(`${exchanges.length} exchanges written to ${out}\n`)
  } finally {
    await pool.close()
  }
}

main().catch(error => {
  process.stderr.write(`capture-protocol: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
