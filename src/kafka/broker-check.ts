/**
 * The start-up check of a cluster's brokers: every broker the cluster names is asked ApiVersions, and one that
 * cannot speak what kmirror needs (older than Kafka 2.1) fails the start with BROKER_INCOMPATIBLE, naming it,
 * instead of failing later, deep in some request, or being retried forever.
 *
 * Brokers of one cluster may run different releases during a rolling upgrade: each is checked, and the summary
 * names the range seen. A broker that does not answer now (restarting, partitioned) is reported, not fatal: every
 * connection negotiates its versions again before its first request, so it is checked when it comes back.
 *
 * Invariants:
 * - The check costs at most the first bootstrap answer + CHECK_WAIT_MS (+ RESOLVE_WAIT_MS when a bootstrap server
 *   and a broker both failed), whatever request.timeout.ms and
 *   socket.connection.setup.timeout.ms are (its connections are closed without waiting for attempts pending). A broker
 *   that accepts connections and never answers (wedged, frozen, half-partitioned) is common in exactly the outages
 *   operators run commands in; waiting its whole request timeout (30 s by default) would spend a command's whole
 *   `--timeout` on a broker whose work the cluster is moving elsewhere meanwhile.
 * - Every bootstrap server is asked at once; the first answer is the cluster's metadata. The others, and every
 *   broker the metadata names, get until CHECK_WAIT_MS after it: one that failed or has not answered by then is
 *   reported unreachable, with its error or "no answer within". A failed bootstrap server that is a failed broker
 *   under another name (`localhost` for `127.0.0.1`: same-broker.ts) is reported once, as that broker; names are
 *   resolved only then, for at most RESOLVE_WAIT_MS.
 */
import { ConnectionPool } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { resolveAfter } from '../deadline.ts'
import { ErrorCodes } from '../errors.ts'
import { parseBrokerAddress } from './broker-address.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { toKmirrorError } from './errors.ts'
import type { ApiSpec } from './protocol/api.ts'
import { FetchApi } from './protocol/fetch.ts'
import { InitProducerIdApi } from './protocol/init-producer-id.ts'
import { ListOffsetsApi } from './protocol/list-offsets.ts'
import { MetadataApi, type MetadataResponse } from './protocol/metadata.ts'
import { brokerApis, sendRequest } from './protocol/negotiation.ts'
import { ProduceApi } from './protocol/produce.ts'
import { addressKey, sameAsBrokers } from './same-broker.ts'

/** What kmirror sends itself to any cluster (source or target: a cluster is often both). */
const NEEDED: readonly ApiSpec<never, unknown>[] = [FetchApi, ProduceApi, MetadataApi, ListOffsetsApi, InitProducerIdApi]

export interface BrokerRelease {
  readonly nodeId: number
  readonly address: string
  /** E.g. "Kafka 3.5-3.6"; "unreachable (<cause>)" for a broker that did not answer. */
  readonly release: string
  readonly reachable: boolean
}

/**
 * Checks every broker of the cluster. `cluster` names it in messages ("cluster A") and its alias the keys in hints
 * ("A.ssl.truststore.location"). Rejects with BROKER_INCOMPATIBLE for the first broker below the floor, or with
 * the connection error of a cluster none of whose bootstrap servers answers (CLUSTER_UNREACHABLE, retriable).
 */
export async function checkBrokers (props: ClientProps, clientId: string, cluster: ClusterContext): Promise<BrokerRelease[]> {
  const options = toConnectOptions(props, clientId)
  const pool = new ConnectionPool(clientId, options)
  try {
    const bootstrap = await bootstrapMetadata(pool, options.bootstrapBrokers, cluster)
    // (a request or connection timeout shorter than the wait ends its attempt first, with its own error)
    const until = Date.now() + CHECK_WAIT_MS
    const brokers = [...bootstrap.metadata.brokers.values()]
    const [failedBootstrap, checked] = await Promise.all([
      bootstrap.others(until, brokers.map(b => `${b.host}:${b.port}`)),
      Promise.all(brokers.map(async broker => {
        const address = `${broker.host}:${broker.port}`
        const answer = await settleBy((async () => await brokerApis(await pool.get({ host: broker.host, port: broker.port })))(), until)
        if (!answer.ok) {
          const cause = answer.late ? LATE : toKmirrorError(answer.error, ErrorCodes.CLUSTER_UNREACHABLE, `ask broker ${broker.nodeId} (${address}) of ${cluster.label} which API versions it speaks`, cluster).message
          return { nodeId: broker.nodeId, address, release: `unreachable (${cause})`, reachable: false }
        }
        const missing = NEEDED.find(spec => answer.value.versionFor(spec) === null)
        if (missing !== undefined) throw answer.value.incompatible(missing, cluster.label)
        return { nodeId: broker.nodeId, address, release: answer.value.release, reachable: true }
      }))
    ])
    return (await reportedOnce(failedBootstrap, checked)).concat(checked)
  } finally {
    // Not awaited: closing waits for a connection attempt still pending (a host that drops packets) until its
    // connect timeout, which would stretch the check past its wait. The attempt ends by itself, and is closed then.
    pool.close().catch(() => undefined)
  }
}

/** How long the check waits for the other bootstrap servers and the brokers once the first bootstrap server answered. */
export const CHECK_WAIT_MS = 5000

/** nodeId of a bootstrap server that did not answer (its node id is not known). */
export const BOOTSTRAP_NODE_ID = -1

type Settled<T> = { ok: true, value: T } | { ok: false, late: false, error: unknown } | { ok: false, late: true }

/** PROMISE settled, or late once UNTIL (a time) passes. Never rejects. */
async function settleBy<T> (promise: Promise<T>, until: number): Promise<Settled<T>> {
  const settled = promise.then((value): Settled<T> => ({ ok: true, value }), (error: unknown): Settled<T> => ({ ok: false, late: false, error }))
  return await resolveAfter(settled, until - Date.now(), { ok: false, late: true } as const)
}

const LATE = `no answer within ${CHECK_WAIT_MS} ms after the first bootstrap server answered (still connecting, or connected and silent: ` +
  'down, cut off, wedged, frozen or overloaded); requests to it wait for their timeouts while it stays so'

interface Bootstrap {
  readonly metadata: MetadataResponse
  /** The other bootstrap servers that failed, or did not answer by UNTIL; those named as one of BROKERS (advertised `host:port`) are left to their broker check. */
  readonly others: (until: number, brokers: readonly string[]) => Promise<BrokerRelease[]>
}

/**
 * The cluster's metadata from the first bootstrap server that answers, all asked at once: one that accepts
 * connections and never answers (a wedged broker) costs nothing while another answers. Rejects with the last
 * server's error when none answers.
 */
async function bootstrapMetadata (pool: ConnectionPool, servers: readonly string[], cluster: ClusterContext): Promise<Bootstrap> {
  const asks = servers.map(server => ({
    server,
    answer: (async () => await sendRequest(await pool.get(parseBrokerAddress(server)), MetadataApi, { topics: [] }, cluster.label))()
  }))
  let metadata: MetadataResponse
  try {
    metadata = await Promise.any(asks.map(a => a.answer))
  } catch (err) {
    const errors = err instanceof AggregateError ? err.errors : [err]
    throw toKmirrorError(errors[errors.length - 1], ErrorCodes.CLUSTER_UNREACHABLE, `check the brokers of ${cluster.label} (${servers.join(',')})`, cluster)
  }
  const others = async (until: number, brokers: readonly string[]): Promise<BrokerRelease[]> => {
    const named = new Set(brokers.map(addressKey))
    const settled = await Promise.all(asks.filter(a => !named.has(addressKey(a.server))).map(async a => ({ server: a.server, answer: await settleBy(a.answer, until) })))
    return settled.flatMap(({ server, answer }) => {
      if (answer.ok) return []
      const cause = answer.late ? LATE : toKmirrorError(answer.error, ErrorCodes.CLUSTER_UNREACHABLE, `bootstrap server ${server} of ${cluster.label}`, cluster).message
      return [{ nodeId: BOOTSTRAP_NODE_ID, address: server, release: `unreachable (${cause})`, reachable: false }]
    })
  }
  return { metadata, others }
}

/** How long the check may spend resolving names, only when a bootstrap server and a broker both failed. */
const RESOLVE_WAIT_MS = 1000

/**
 * FAILED bootstrap servers but those that are a broker of CHECKED under another name which failed its own check
 * too (`localhost` for `127.0.0.1`): that broker is reported once, under its advertised address. A bootstrap
 * server that failed while the broker it resolves to answered is reported: its name (a TLS host name mismatch, a
 * broken route) is the fault.
 */
async function reportedOnce (failed: readonly BrokerRelease[], checked: readonly BrokerRelease[]): Promise<BrokerRelease[]> {
  const silent = checked.filter(b => !b.reachable).map(b => b.address)
  if (failed.length === 0 || silent.length === 0) return [...failed]
  const same = new Set(await sameAsBrokers(failed.map(b => b.address), silent, RESOLVE_WAIT_MS))
  return failed.filter(b => !same.has(b.address))
}

/** "Kafka 3.5-3.6" when every broker looks alike, else each broker with its release (bootstrap servers that did not answer left out). */
export function describeReleases (all: readonly BrokerRelease[]): string {
  const brokers = all.filter(b => b.nodeId !== BOOTSTRAP_NODE_ID)
  const releases = new Set(brokers.map(b => b.release))
  if (releases.size === 1) return `${[...releases][0]!} (${brokers.length} broker${brokers.length === 1 ? '' : 's'})`
  return brokers.map(b => `${b.nodeId}@${b.address}: ${b.release}`).join(', ')
}
