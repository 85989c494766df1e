/**
 * How the batch writer (batch-writer.ts) words a partition it could not write: the refusals it finds before sending
 * (the topic's metadata refused, the remote topic deleted and created again) and the typed PartitionFailure a caller
 * gets for every refusal, with the hint an operator acts on.
 *
 * Invariants:
 * - A topic refused for an ACL names the exact grant: WRITE, also when only its metadata was refused (the writer
 *   writes it next, and WRITE implies the DESCRIBE the metadata needs; naming DESCRIBE would take two fixes).
 * - Every message names the cluster; none holds a record's bytes or a secret.
 */
import { describeGrant } from './acl-grant.ts'
import type { PartitionFailure, PartitionWrite } from './batch-writer-types.ts'
import type { Failure } from './broker-produce.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isRefusedBatchError, isRetriableKafkaError, kafkaErrorHint, kafkaErrorInfo, kafkaErrorName } from './errors.ts'

/** Write WRITE (its index ITEM) whose topic's metadata the cluster refused with ERROR_CODE. */
export function metadataRefused (item: number, write: PartitionWrite, errorCode: number, cluster: ClusterContext): Failure {
  return {
    write: item, topic: write.topic, partition: write.partition, error: kafkaErrorName(errorCode),
    message: `${cluster.label} refused the metadata of topic ${write.topic}`, retriable: isRetriableKafkaError(errorCode), operation: 'DESCRIBE'
  }
}

/** Write WRITE (its index ITEM) whose remote topic has topic id NOW where it had BEFORE: deleted and created again. */
/** The failure of a write whose remote topic was deleted and created again (remote-topic-ids.ts). */
export const REMOTE_TOPIC_RECREATED = 'REMOTE_TOPIC_RECREATED'

export function topicRecreated (item: number, write: PartitionWrite, before: string, now: string | null | undefined, cluster: ClusterContext): Failure {
  return {
    write: item, topic: write.topic, partition: write.partition, error: REMOTE_TOPIC_RECREATED,
    message: `topic ${write.topic} on ${cluster.label} has a new topic id (${before} before, ${now} now): it was deleted and created again`, retriable: true
  }
}

/** The typed failures a write returns for its refused partitions; PRINCIPAL (`User:name`) is who writes. */
export function partitionFailures (failures: readonly Failure[], principal: string, cluster: ClusterContext): PartitionFailure[] {
  return failures.map(f => ({
    write: f.write, topic: f.topic, partition: f.partition, error: f.error, message: f.message, retriable: f.retriable,
    ...(f.operation === undefined ? {} : { operation: f.operation }),
    kind: kafkaErrorInfo(f.error).kind,
    refusedBatch: isRefusedBatchError(f.error),
    hint: f.error === 'TOPIC_AUTHORIZATION_FAILED'
      ? describeGrant({ operation: 'WRITE', resourceType: 'topic', names: [f.topic] }, principal, cluster)
      : kafkaErrorHint(f.error, cluster)
  }))
}
