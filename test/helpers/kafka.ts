/**
 * Test-side Kafka utilities over @platformatic/kafka: topics, offsets, exact produce, transactions, and
 * (re-exported from kafka-read.ts) exact read-back.
 *
 * Every helper opens its own clients and closes them before returning. Helpers that create something
 * accept `t` (the node:test context) and register its removal with `t.after` before creating it.
 */
import { ConfigResourceTypes, ConfigSources, ListOffsetTimestamps, ProduceAcks, Producer, type Admin } from '@platformatic/kafka'
import { resolveCluster, type ClusterRef } from './clusters.ts'
import { clientOptions, isolationLevel, withAdmin, type Cleanup, type Compression, type Isolation, type TestRecord } from './kafka-clients.ts'
import { kafkaErrorNames } from '../../src/kafka/errors.ts'
import { uniqueName, waitFor } from './wait.ts'

export * from './kafka-clients.ts'
export * from './kafka-read.ts'

/** Records per produce request stay under this many payload bytes, below the broker's 1 MiB default. */
const MAX_CHUNK_BYTES = 512 * 1024

// ── topics ───────────────────────────────────────────────────────────────────────────────────────────

export interface CreateTopicOptions {
  partitions: number
  configs?: Record<string, string>
  replicationFactor?: number
  /** The brokers of each partition (then `replicationFactor` is ignored; `partitions` must match its length). */
  assignments?: readonly (readonly number[])[]
  /** Registers deleteTopics for this topic with t.after. */
  t?: Cleanup
}

/** Creates the topic and waits until its leader serves every partition, so producing right after works. */
export async function createTopic (ref: ClusterRef, name: string, options: CreateTopicOptions): Promise<void> {
  const cluster = resolveCluster(ref)
  options.t?.after(() => deleteTopics(cluster, [name]))
  await withAdmin(cluster, async admin => {
    try {
      const configs = Object.entries(options.configs ?? {}).map(([key, value]) => ({ name: key, value }))
      await admin.createTopics(options.assignments === undefined
        ? { topics: [name], partitions: options.partitions, replicas: options.replicationFactor ?? 1, configs }
        : { topics: [{ topic: name, assignments: options.assignments.map((brokers, partition) => ({ partition, brokers: [...brokers] })) }], configs })
    } catch (error) {
      // A loaded ZooKeeper-mode broker can take longer than the client's request timeout to create a topic; the
      // client's retry is then told TOPIC_ALREADY_EXISTS about its own first try. Names are unique per test, so
      // that answer means the topic is ours; the wait below proves it has the partitions asked for.
      if (!kafkaErrorNames(error).includes('TOPIC_ALREADY_EXISTS')) throw error
    }
    // Metadata can name a leader before that broker serves the partition (a produce then gets
    // NOT_LEADER_OR_FOLLOWER), so ready means: ListOffsets, which only the leader answers, works.
    const partitions = Array.from({ length: options.partitions }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST }))
    let clash = 0
    await waitFor(
      async () => {
        const metadata = await admin.metadata({ topics: [name], forceUpdate: true })
        const described = metadata.topics.get(name)?.partitions ?? []
        // (waitFor retries what its check throws: a clash ends the wait and fails below)
        if (described.length > options.partitions) clash = described.length
        if (clash > 0) return { done: true, state: 'a name clash' }
        const led = described.filter(p => p && p.leader >= 0).length
        if (led < options.partitions) return { done: false, state: `${led} of ${options.partitions} partitions have a leader` }
        const [listed] = await admin.listOffsets({ topics: [{ name, partitions }] })
        const served = listed?.partitions.length ?? 0
        return { done: served === options.partitions, state: `${served} of ${options.partitions} partitions answer ListOffsets` }
      },
      { timeoutMs: 30_000, intervalMs: 100, message: `topic ${name} on ${cluster.name} ready` }
    )
    if (clash > 0) throw new Error(`topic ${name} on ${cluster.name} has ${clash} partitions, not ${options.partitions}: a name clash`)
  })
}

/** Deletes the topics that exist among NAMES; missing ones are ignored. */
export async function deleteTopics (ref: ClusterRef, names: readonly string[]): Promise<void> {
  await withAdmin(ref, async admin => {
    const existing = new Set(await admin.listTopics({ includeInternals: false }))
    const toDelete = names.filter(n => existing.has(n))
    if (toDelete.length > 0) await admin.deleteTopics({ topics: toDelete })
  })
}

/** Topic names, sorted, without internal topics (__consumer_offsets, __transaction_state). */
export async function listTopics (ref: ClusterRef): Promise<string[]> {
  return withAdmin(ref, async admin => (await admin.listTopics({ includeInternals: false })).sort())
}

/**
 * The topic's configuration as the broker describes it, every key with its effective value;
 * with `overridesOnly`, only what was set on the topic itself (what MM2's config sync copies).
 */
export async function topicConfig (
  ref: ClusterRef,
  topic: string,
  { overridesOnly = false }: { overridesOnly?: boolean } = {}
): Promise<Record<string, string | null>> {
  return withAdmin(ref, async admin => {
    const [description] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }]
    })
    const result: Record<string, string | null> = {}
    for (const entry of description?.configs ?? []) {
      if (overridesOnly && entry.configSource !== ConfigSources.DYNAMIC_TOPIC_CONFIG) continue
      result[entry.name] = entry.value ?? null
    }
    return result
  })
}

/** Number of partitions of TOPIC (throws when the topic does not exist). */
export async function partitionCount (ref: ClusterRef, topic: string): Promise<number> {
  return withAdmin(ref, async admin => {
    const metadata = await admin.metadata({ topics: [topic], forceUpdate: true })
    const count = metadata.topics.get(topic)?.partitionsCount
    if (count === undefined) throw new Error(`topic ${topic} not found on ${resolveCluster(ref).name}`)
    return count
  })
}

/**
 * Per-partition end offsets, indexed by partition: the high watermark, or with read_committed the last
 * stable offset.
 */
export async function endOffsets (ref: ClusterRef, topic: string, { isolation = 'read_uncommitted' }: { isolation?: Isolation } = {}): Promise<bigint[]> {
  return listOffsetsAt(ref, topic, ListOffsetTimestamps.LATEST, isolation)
}

/** Per-partition log start offsets, indexed by partition. */
export async function startOffsets (ref: ClusterRef, topic: string): Promise<bigint[]> {
  return listOffsetsAt(ref, topic, ListOffsetTimestamps.EARLIEST, 'read_uncommitted')
}

async function listOffsetsAt (ref: ClusterRef, topic: string, timestamp: bigint, isolation: Isolation): Promise<bigint[]> {
  const count = await partitionCount(ref, topic)
  return withAdmin(ref, async admin => await offsetsWith(admin, topic, count, timestamp, isolation))
}

/** Per-partition offsets of TOPIC's COUNT partitions at TIMESTAMP, asked with ADMIN (kept open by a caller that polls). */
export async function offsetsWith (admin: Admin, topic: string, count: number, timestamp: bigint, isolation: Isolation): Promise<bigint[]> {
  const partitions = Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp }))
  const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions }], isolationLevel: isolationLevel(isolation) })
  const offsets: bigint[] = new Array(count).fill(-1n)
  for (const p of listed?.partitions ?? []) offsets[p.partitionIndex] = p.offset
  return offsets
}

// ── produce ──────────────────────────────────────────────────────────────────────────────────────────

export interface ProduceOptions {
  compression?: Compression
  /**
   * Idempotent by default: the client retries a whole multi-partition request when one partition fails
   * (e.g. NOT_LEADER_OR_FOLLOWER), which duplicates the partitions that had succeeded unless the broker
   * can drop the retried batches by sequence number.
   */
  idempotent?: boolean
  /** Uncompressed bytes per batch (512 KiB by default); small batches make a copy take many fetch rounds. */
  maxBatchBytes?: number
}

type TestProducer = Producer<Buffer | null, Buffer | null, Buffer, Buffer | null>
type OutgoingMessage = {
  topic: string
  partition: number
  key: Buffer | null
  value: Buffer | null
  headers: Map<Buffer, Buffer | null>
  timestamp: bigint
}

function toMessage (record: TestRecord): OutgoingMessage {
  // The client takes headers as a Map. A fresh copy of every key makes each one a distinct Map key, so
  // repeated header names survive in order even when the caller reused one Buffer object.
  const headers = new Map<Buffer, Buffer | null>(record.headers.map(([k, v]) => [Buffer.from(k), v]))
  return { topic: record.topic, partition: record.partition, key: record.key, value: record.value, headers, timestamp: record.timestamp }
}

function recordBytes (r: TestRecord): number {
  let size = 32 + (r.key?.length ?? 0) + (r.value?.length ?? 0)
  for (const [k, v] of r.headers) size += 8 + k.length + (v?.length ?? 0)
  return size
}

/**
 * Splits RECORDS into rounds: each round holds at most one chunk per topic-partition (kept in order), so
 * one send per round writes one batch per partition; chunks stay under MAX_CHUNK_BYTES.
 */
function planRounds (records: readonly TestRecord[], maxBatchBytes = MAX_CHUNK_BYTES): { round: number; index: number }[][] {
  const rounds: { round: number; index: number }[][] = []
  const state = new Map<string, { round: number; bytes: number }>()
  records.forEach((record, index) => {
    const key = `${record.topic}\u0000${record.partition}`
    const size = recordBytes(record)
    let s = state.get(key)
    if (!s) {
      s = { round: 0, bytes: 0 }
      state.set(key, s)
    } else if (s.bytes + size > maxBatchBytes) {
      s.round += 1
      s.bytes = 0
    }
    s.bytes += size
    ;(rounds[s.round] ??= []).push({ round: s.round, index })
  })
  return rounds
}

type Sender = (messages: OutgoingMessage[]) => Promise<{ offsets?: { topic: string; partition: number; offset: bigint }[] }>

/** Sends RECORDS round by round; returns the offset each record was written at, in input order. */
async function sendAll (records: readonly TestRecord[], send: Sender, maxBatchBytes?: number): Promise<bigint[]> {
  const offsets: bigint[] = new Array(records.length).fill(-1n)
  for (const round of planRounds(records, maxBatchBytes)) {
    const messages = round.map(({ index }) => toMessage(records[index]!))
    const result = await send(messages)
    const base = new Map((result.offsets ?? []).map(o => [`${o.topic}\u0000${o.partition}`, o.offset]))
    const next = new Map<string, bigint>()
    for (const { index } of round) {
      const r = records[index]!
      const key = `${r.topic}\u0000${r.partition}`
      const offset = next.get(key) ?? base.get(key)
      if (offset === undefined) throw new Error(`no produce offset returned for ${r.topic}-${r.partition}`)
      offsets[index] = offset
      next.set(key, offset + 1n)
    }
  }
  return offsets
}

/**
 * Writes RECORDS exactly as given (partition, key, value, headers in order with repeats, timestamp), with
 * one batch per partition per request so compression really yields compressed batches. acks=all,
 * idempotent unless told otherwise. Returns the offset of each record, in input order.
 */
export async function produce (ref: ClusterRef, records: readonly TestRecord[], { compression = 'none', idempotent = true, maxBatchBytes }: ProduceOptions = {}): Promise<bigint[]> {
  const producer: TestProducer = new Producer({ ...clientOptions(ref, 'kmirror-test-producer'), acks: ProduceAcks.ALL, idempotent, compression })
  try {
    return await sendAll(records, messages => producer.send({ messages }), maxBatchBytes)
  } finally {
    await producer.close()
  }
}

export interface TransactionStep {
  commit: boolean
  /** `topic` may be left out: it defaults to produceTransactions' TOPIC. */
  records: (Omit<TestRecord, 'topic'> & { topic?: string })[]
}

export interface ProduceTransactionsOptions {
  compression?: Compression
  transactionalId?: string
  /** How long to wait for the last transaction's markers (30 s by default). */
  stableTimeoutMs?: number
}

/**
 * Runs PLAN with one transactional producer: per step begin, send its records, then commit or abort.
 * Commit and abort return before the coordinator has written the markers, so this then waits until every
 * partition of TOPIC is stable (last stable offset = high watermark): read_committed then sees it all.
 * Returns, per step, the offset each record was written at.
 */
export async function produceTransactions (
  ref: ClusterRef,
  topic: string,
  plan: readonly TransactionStep[],
  { compression = 'none', transactionalId = uniqueName('kmirror-test-txn'), stableTimeoutMs = 30_000 }: ProduceTransactionsOptions = {}
): Promise<bigint[][]> {
  const producer: TestProducer = new Producer({
    ...clientOptions(ref, 'kmirror-test-txn-producer'),
    transactionalId,
    idempotent: true,
    acks: ProduceAcks.ALL,
    compression
  })
  try {
    const result: bigint[][] = []
    for (const step of plan) {
      const records = step.records.map(r => ({ ...r, topic: r.topic ?? topic }))
      const transaction = await producer.beginTransaction()
      try {
        result.push(await sendAll(records, messages => transaction.send({ messages })))
      } catch (error) {
        await transaction.abort().catch(() => undefined)
        throw error
      }
      if (step.commit) await transaction.commit()
      else await transaction.abort()
    }
    await waitForStable(ref, topic, stableTimeoutMs)
    return result
  } finally {
    await producer.close()
  }
}

/**
 * Begins a transaction and sends RECORDS in it, then leaves it open: read_committed readers stop at its first
 * record (the last stable offset) while the high watermark counts it, until `commit` or `abort` (or the coordinator
 * aborts it at its timeout: 5 s unless TIMEOUT_MS). The producer is closed
 * (the transaction aborted if still open) by `t.after`.
 */
export async function openTransaction (ref: ClusterRef, records: readonly TestRecord[], t: Cleanup, { timeoutMs }: { timeoutMs?: number } = {}): Promise<{ commit: () => Promise<void>, abort: () => Promise<void> }> {
  // (the client library sends its request timeout, 5 s by default, as the transaction timeout: TIMEOUT_MS sets both)
  const producer: TestProducer = new Producer({
    ...clientOptions(ref, 'kmirror-test-txn-producer'), transactionalId: uniqueName('kmirror-test-open-txn'), idempotent: true, acks: ProduceAcks.ALL,
    ...(timeoutMs === undefined ? {} : { timeout: timeoutMs })
  })
  let open = true
  const transaction = await producer.beginTransaction()
  t.after(async () => {
    if (open) await transaction.abort().catch(() => undefined)
    await producer.close().catch(() => undefined)
  })
  await sendAll(records, messages => transaction.send({ messages }))
  return {
    commit: async () => {
      await transaction.commit()
      open = false
    },
    abort: async () => {
      await transaction.abort()
      open = false
    }
  }
}

/**
 * Waits until no partition of TOPIC has an open transaction (last stable offset = high watermark), e.g.
 * after a commit or abort whose markers the coordinator writes asynchronously.
 */
export async function waitForStable (ref: ClusterRef, topic: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      const [stable, high] = await Promise.all([endOffsets(ref, topic, { isolation: 'read_committed' }), endOffsets(ref, topic)])
      return { done: stable.every((o, p) => o === high[p]), state: { lastStableOffsets: stable, highWatermarks: high } }
    },
    { timeoutMs, intervalMs: 50, message: `no open transaction on ${topic}` }
  )
}

/**
 * A base for explicit record timestamps: one hour ago. Never use a fixed date in the past: brokers delete
 * records older than `retention.ms` (7 days by default) at their first retention check, 30 s after start,
 * and a test would then see its data vanish on fresh clusters only.
 */
export const TIMESTAMP_BASE: bigint = BigInt(Date.now() - 3_600_000)
