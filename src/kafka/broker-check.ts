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
import { MetadataApi } from './protocol/metadata.ts'
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
    let metadata
    try {
      const bootstrap = await pool.getFirstAvailable(options.bootstrapBrokers.map(parseBrokerAddress))
      metadata = await sendRequest(bootstrap, MetadataApi, { topics: [] }, cluster.label)
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `check the brokers of ${cluster.label} (${options.bootstrapBrokers.join(',')})`, cluster)
    }
    return await Promise.all([...metadata.brokers.values()].map(async broker => {
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
    }))
  } finally {
    await pool.close().catch(() => undefined)
  }
}

/** "Kafka 3.5-3.6" when every broker looks alike, else each broker with its release. */
export function describeReleases (brokers: readonly BrokerRelease[]): string {
  const releases = new Set(brokers.map(b => b.release))
  if (releases.size === 1) return `${[...releases][0]!} (${brokers.length} broker${brokers.length === 1 ? '' : 's'})`
  return brokers.map(b => `${b.nodeId}@${b.address}: ${b.release}`).join(', ')
}
