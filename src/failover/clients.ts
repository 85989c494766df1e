/**
 * Deadlines for the clusters a failover, failback or offsets-set command talks to (their clients come from
 * kafka/cluster-clients.ts): a broker killed with its host does not refuse connections, it just never answers.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { rejectAfter } from '../deadline.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'

/** `work`, or a TIMEOUT error naming the cluster and its brokers after `ms`. */
export async function withDeadline<T> (work: Promise<T>, ms: number, cluster: ClusterClientConfig): Promise<T> {
  const brokers = cluster.admin['bootstrap.servers'] ?? cluster.bootstrapServers.join(',')
  return await rejectAfter(work, ms, () => new KmirrorError(ErrorCodes.TIMEOUT,
    `cluster ${cluster.alias} (brokers ${brokers}): no answer within ${ms} ms (--timeout); check ${cluster.alias}.bootstrap.servers and that its brokers run and answer`, { retriable: true }))
}
