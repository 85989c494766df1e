/**
 * Consumer groups in tests: a real consumer that joins a group (so the group has an active member), and
 * reading or writing a group's committed offsets from outside it.
 */
import { ConnectionPool, Consumer, MessagesStreamModes, ProduceAcks, Producer, type MessagesStream } from '@platformatic/kafka'
import { CoordinatorKeyTypes, findCoordinator } from '../../src/kafka/protocol/find-coordinator.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import type { CommittedOffset, GroupDescription } from '../../src/kafka/group-admin.ts'
import { resolveCluster, type ClusterRef } from './clusters.ts'
import { clientOptions, type Cleanup } from './kafka-clients.ts'
import { uniqueName, waitFor } from './wait.ts'

async function withGroupAdmin<T> (ref: ClusterRef, use: (admin: AdminClient) => Promise<T>): Promise<T> {
  const cluster = resolveCluster(ref)
  const props: Record<string, string> = { 'bootstrap.servers': cluster.bootstrap }
  if (cluster.sasl !== undefined) {
    Object.assign(props, {
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required username="${cluster.sasl.username}" password="${cluster.sasl.password}";`
    })
  }
  const admin = new AdminClient(props, 'kmirror-test-groups', { label: `cluster ${cluster.name}` })
  try {
    return await use(admin)
  } finally {
    await admin.close()
  }
}

/** The group's committed offsets, sorted by topic and partition; [] when the group does not exist. */
export async function committedOffsets (ref: ClusterRef, group: string): Promise<CommittedOffset[]> {
  const offsets = await withGroupAdmin(ref, admin => admin.groups.listCommittedOffsets(group))
  return offsets.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
}

/** Commits offsets for a group from outside it (the group must have no active members). */
export async function commitOffsets (ref: ClusterRef, group: string, offsets: readonly { topic: string, partition: number, offset: number }[]): Promise<void> {
  await withGroupAdmin(ref, admin => admin.groups.alterCommittedOffsets(group, offsets))
}

export async function describeGroup (ref: ClusterRef, group: string): Promise<GroupDescription | undefined> {
  return await withGroupAdmin(ref, async admin => (await admin.groups.describeGroups([group])).get(group))
}

export interface ActiveMember {
  /** Leaves the group; afterwards it is Empty. */
  leave: () => Promise<void>
}

/**
 * A real consumer that joins GROUP subscribed to TOPICS and stays in it (heartbeating) until `leave`. It
 * never commits. Resolves once the group is Stable with it as a member.
 */
export async function joinGroup (ref: ClusterRef, group: string, topics: readonly string[], t: Cleanup): Promise<ActiveMember> {
  const consumer = new Consumer({ ...clientOptions(ref, 'kmirror-test-member'), groupId: group, autocommit: false })
  let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined
  let left = false
  const leave = async (): Promise<void> => {
    if (left) return
    left = true
    await stream?.close().catch(() => undefined)
    await consumer.close(true).catch(() => undefined)
  }
  t.after(leave)
  stream = await consumer.consume({
    topics: [...topics], autocommit: false, mode: MessagesStreamModes.COMMITTED, fallbackMode: 'latest', sessionTimeout: 10_000, heartbeatInterval: 500
  })
  // Records are not needed: keep the stream flowing so the consumer keeps fetching and heartbeating.
  stream.on('data', () => undefined)
  await waitFor(async () => {
    const d = await describeGroup(ref, group)
    return { done: d?.state === 'Stable' && d.members === 1, state: d }
  }, { timeoutMs: 30_000, intervalMs: 200, message: `consumer joined group ${group}` })
  return { leave }
}

/**
 * Begins a transaction that commits OFFSETS for GROUP (TxnOffsetCommit from outside the group, as an application
 * using the producer-side offsets API does) and leaves it open: a stable read of the group's commits answers
 * UNSTABLE_OFFSET_COMMIT until `commit`. The transaction is aborted and the producer closed by `t.after`, and the
 * coordinator aborts it by itself after TIMEOUT_MS (the library sends its request timeout as the transaction's).
 */
export async function openOffsetsTransaction (ref: ClusterRef, group: string, offsets: readonly { topic: string, partition: number, offset: number }[], t: Cleanup, timeoutMs = 60_000): Promise<{ commit: () => Promise<void> }> {
  const cluster = resolveCluster(ref)
  const coordinatorId = await groupCoordinatorOf(cluster.bootstrap, group, cluster.name)
  const producer = new Producer({
    ...clientOptions(ref, 'kmirror-test-offsets-txn'), transactionalId: uniqueName('kmirror-test-offsets-txn'), idempotent: true, acks: ProduceAcks.ALL, timeout: timeoutMs
  })
  let open = true
  const transaction = await producer.beginTransaction()
  t.after(async () => {
    if (open) await transaction.abort().catch(() => undefined)
    await producer.close().catch(() => undefined)
  })
  const consumer = { groupId: group, generationId: -1, memberId: '', coordinatorId }
  await transaction.addConsumer(consumer as unknown as Parameters<typeof transaction.addConsumer>[0])
  for (const o of offsets) {
    // (the library commits the message's offset + 1, the next record to read)
    await transaction.addOffset({ topic: o.topic, partition: o.partition, offset: BigInt(o.offset - 1), metadata: { consumer } } as unknown as Parameters<typeof transaction.addOffset>[0])
  }
  return {
    commit: async () => {
      await transaction.commit()
      open = false
    }
  }
}

/** The node id of the broker coordinating GROUP, asked of the first broker of BOOTSTRAP (a cluster without SASL). */
async function groupCoordinatorOf (bootstrap: string, group: string, name: string): Promise<number> {
  const pool = new ConnectionPool('kmirror-test', { connectTimeout: 5000, requestTimeout: 10_000 })
  try {
    const [host, port] = bootstrap.split(',')[0]!.split(':') as [string, string]
    const [found] = await findCoordinator(await pool.get({ host, port: Number(port) }), CoordinatorKeyTypes.GROUP, [group], `cluster ${name}`)
    if (found === undefined || found.errorCode !== 0) throw new Error(`no coordinator for group ${group} on cluster ${name}`)
    return found.nodeId
  } finally {
    await pool.close()
  }
}
