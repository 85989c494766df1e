/**
 * What a test cluster's broker offers, asked with kmirror's own requests (src/kafka/protocol: ApiVersions
 * negotiation, ConsumerGroupDescribe): a test that needs something an external cluster may lack skips, saying why,
 * instead of failing after its wait.
 */
import { ConnectionPool, type Connection } from '@platformatic/kafka'
import { parseBrokerAddress } from '../../src/kafka/broker-address.ts'
import { kafkaErrorName } from '../../src/kafka/errors.ts'
import { ConsumerGroupDescribeApi } from '../../src/kafka/protocol/consumer-group-describe.ts'
import { brokerApis, sendRequest } from '../../src/kafka/protocol/negotiation.ts'
import { resolveCluster, type ClusterRef, type TestCluster } from './clusters.ts'
import { uniqueName } from './wait.ts'

/** ConsumerGroupHeartbeat, what a member of a KIP-848 group (`group.protocol=consumer`) sends. */
const CONSUMER_GROUP_HEARTBEAT = 68

/** USE with a connection to the cluster's first bootstrap broker (brokers of one cluster may differ during a rolling upgrade). */
async function withBootstrapBroker<T> (cluster: TestCluster, use: (connection: Connection) => Promise<T>): Promise<T> {
  const pool = new ConnectionPool('kmirror-test-broker-apis', { connectTimeout: 5000, requestTimeout: 10_000, ...(cluster.sasl ? { sasl: { ...cluster.sasl } } : {}) })
  try {
    return await use(await pool.get(parseBrokerAddress(cluster.bootstrap.split(',')[0]!.trim())))
  } finally {
    await pool.close().catch(() => undefined)
  }
}

/**
 * Why the broker runs no KIP-848 group, or undefined. Brokers before Kafka 3.7 do not list ConsumerGroupHeartbeat;
 * 3.8-3.9 (and 4.x with the consumer protocol turned off) list it but answer UNSUPPORTED_VERSION to it and to
 * ConsumerGroupDescribe alike, which is asked here about a group that does not exist (it joins nothing).
 */
async function kip848Refusal (cluster: TestCluster): Promise<string | undefined> {
  return await withBootstrapBroker(cluster, async connection => {
    const apis = await brokerApis(connection)
    const broker = `broker ${apis.address} (looks like ${apis.release})`
    if (!apis.apis.has(CONSUMER_GROUP_HEARTBEAT)) return `${broker} does not offer ConsumerGroupHeartbeat (API key ${CONSUMER_GROUP_HEARTBEAT})`
    if (apis.versionFor(ConsumerGroupDescribeApi) === null) return `${broker} offers ConsumerGroupHeartbeat but no ConsumerGroupDescribe version kmirror speaks, so kmirror cannot see a KIP-848 group's members there`
    const answer = await sendRequest(connection, ConsumerGroupDescribeApi, { groups: [uniqueName('kip848-probe')] }, `cluster ${cluster.name}`)
    if (answer.groups.some(g => kafkaErrorName(g.errorCode) === 'UNSUPPORTED_VERSION')) {
      return `${broker} offers ConsumerGroupHeartbeat but has the consumer rebalance protocol turned off (ConsumerGroupDescribe answers UNSUPPORTED_VERSION)`
    }
    return undefined
  })
}

/**
 * node:test's `skip` for a test that runs a KIP-848 consumer group on CLUSTER: false on the clusters of
 * kafka-local.sh (4.1.1, never asked), else why not when the external cluster's broker shows it runs no KIP-848 group.
 */
export async function skipWithoutKip848 (ref: ClusterRef): Promise<false | string> {
  const cluster = resolveCluster(ref)
  if (!cluster.external) return false
  const refusal = await kip848Refusal(cluster)
  if (refusal === undefined) return false
  return `external cluster ${cluster.name}: ${refusal}; KIP-848 consumer groups (group.protocol=consumer) need a broker running the ` +
    'consumer rebalance protocol: Kafka 4.0 or newer (its default), or 3.7-3.9 with group.coordinator.rebalance.protocols=classic,consumer'
}
