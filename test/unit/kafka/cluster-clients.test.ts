/**
 * Every client ClusterClients opens names its cluster and the keys to fix in its errors, not only the start-up
 * broker check. No Kafka needed: the cluster is an address nobody listens on.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { ClusterClientConfig } from '../../../src/config/types.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { ClusterClients } from '../../../src/kafka/cluster-clients.ts'

/** A local port nothing listens on (bound once, then closed). */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>(resolve => server.close(() => resolve()))
  assert.ok(typeof address === 'object' && address !== null)
  return address.port
}

async function failureOf (operation: () => Promise<unknown>): Promise<KmirrorError> {
  const err = await operation().then(() => undefined, (e: unknown) => e)
  assert.ok(err instanceof KmirrorError, `expected a KmirrorError, got ${String(err)}`)
  return err
}

describe('ClusterClients: errors of every client name the cluster and its keys', () => {
  const alias = 'Downstream7'
  let clients: ClusterClients
  let address = ''

  before(async () => {
    address = `127.0.0.1:${await closedPort()}`
    const props = { 'bootstrap.servers': address, 'retry.backoff.ms': '10', 'request.timeout.ms': '2000' }
    const cluster: ClusterClientConfig = { alias, bootstrapServers: [address], consumer: props, producer: props, admin: props }
    clients = new ClusterClients(cluster, 'A->Downstream7')
  })
  after(async () => { await clients.close() })

  const operations: [string, () => Promise<unknown>][] = [
    ['the admin client', async () => await clients.admin.listTopics()],
    ['the group admin', async () => await clients.admin.groups.listGroups()],
    ['a record fetcher (its metadata)', async () => await clients.reader.fetchBatches([{ topic: 't', partition: 0, offset: 0 }])],
    ['the offset lookup', async () => await clients.lookup.earliest('t', [0])],
    ['a record writer', async () => await clients.writer('test-writer', { idempotent: true, maxChunkBytes: 1000 }).write([{ topic: 't', partition: 0, records: [] }])],
    ['a batch writer', async () => await clients.batchWriter('test-batches', { maxInFlight: 1, maxRequestBytes: 1000, timeoutMs: 1000 })
      .write([{ topic: 't', partition: 0, batches: [{ recordCount: 1, build: () => Buffer.alloc(0) }] }], () => undefined)],
    ['the broker check', async () => await clients.checkBrokers()]
  ]
  for (const [client, operation] of operations) {
    it(`Given a cluster nobody listens on, when ${client} fails, then its message names the cluster and the hint names ${alias}.bootstrap.servers`, { timeout: 60_000 }, async () => {
      const err = await failureOf(operation)
      assert.equal(err.code, ErrorCodes.CLUSTER_UNREACHABLE, err.message)
      assert.match(err.message, new RegExp(`\\bcluster ${alias}\\b`))
      assert.match(err.message, new RegExp(`nothing accepts connections there \\(ECONNREFUSED: [^)]*\\): check ${alias}\\.bootstrap\\.servers and that the brokers run`))
      assert.ok(!err.message.includes('<alias>'), err.message)
    })
  }
})
