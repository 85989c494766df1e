/**
 * The start-up check of a cluster's brokers: every broker the cluster names is asked ApiVersions, and one that
 * cannot speak what kmirror needs (older than Kafka 2.1) fails the start with BROKER_INCOMPATIBLE, naming it,
 * instead of failing later, deep in some request, or being retried forever.
 *
 * Brokers of one cluster may run different releases during a rolling upgrade: each is checked, and the summary
 * names the range seen. A broker that does not answer now (restarting, partitioned) is reported, not fatal: every
 * connection negotiates its versions again before its first request, so it is checked when it comes back.
 */
import { ConnectionPool } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
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
    const { metadata, silent } = await bootstrapMetadata(pool, options.bootstrapBrokers, cluster)
    return silent.concat(await Promise.all([...metadata.brokers.values()].map(async broker => {
      const address = `${broker.host}:${broker.port}`
      let apis
      try {
        apis = await brokerApis(await pool.get({ host: broker.host, port: broker.port }))
      } catch (err) {
        const cause = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `ask broker ${broker.nodeId} (${address}) of ${cluster.label} which API versions it speaks`, cluster)
        return { nodeId: broker.nodeId, address, release: `unreachable (${cause.message})`, reachable: false }
      }
      const missing = NEEDED.find(spec => apis.versionFor(spec) === null)
      if (missing !== undefined) throw apis.incompatible(missing, cluster.label)
      return { nodeId: broker.nodeId, address, release: apis.release, reachable: true }
    })))
  } finally {
    await pool.close().catch(() => undefined)
  }
}

/** nodeId of a bootstrap server that did not answer (its node id is not known). */
export const BOOTSTRAP_NODE_ID = -1

/**
 * The cluster's metadata from the first bootstrap server that answers, each tried in turn: one that accepts
 * connections and never answers (a wedged broker) costs its request timeout, then the next is asked; those that
 * failed are returned as unreachable (node id -1). Rejects with the last server's error when none answers.
 */
async function bootstrapMetadata (pool: ConnectionPool, servers: readonly string[], cluster: ClusterContext): Promise<{ metadata: MetadataResponse, silent: BrokerRelease[] }> {
  const silent: BrokerRelease[] = []
  let last: unknown
  for (const server of servers) {
    try {
      return { metadata: await sendRequest(await pool.get(parseBrokerAddress(server)), MetadataApi, { topics: [] }, cluster.label), silent }
    } catch (err) {
      last = err
      const cause = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `bootstrap server ${server} of ${cluster.label}`, cluster)
      silent.push({ nodeId: BOOTSTRAP_NODE_ID, address: server, release: `unreachable (${cause.message})`, reachable: false })
    }
  }
  throw toKmirrorError(last, ErrorCodes.CLUSTER_UNREACHABLE, `check the brokers of ${cluster.label} (${servers.join(',')})`, cluster)
}

/** "Kafka 3.5-3.6" when every broker looks alike, else each broker with its release (bootstrap servers that did not answer left out). */
export function describeReleases (all: readonly BrokerRelease[]): string {
  const brokers = all.filter(b => b.nodeId !== BOOTSTRAP_NODE_ID)
  const releases = new Set(brokers.map(b => b.release))
  if (releases.size === 1) return `${[...releases][0]!} (${brokers.length} broker${brokers.length === 1 ? '' : 's'})`
  return brokers.map(b => `${b.nodeId}@${b.address}: ${b.release}`).join(', ')
}
