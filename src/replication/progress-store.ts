/**
 * Replication progress, stored where MM2 stores it: Connect source offsets in `mm2-offsets.<source>.internal`
 * on the target cluster, so that a flow can be handed from MM2 to kmirror and back without re-copying.
 *
 * Invariants:
 * - The stored value is the last source offset whose records up to it are acknowledged by the target
 *   (MM2: "last replicated upstream offset"); replication resumes at value + 1.
 * - Keys are the exact bytes Connect writes (connector name, then {cluster, partition, topic}); Connect looks
 *   offsets up by those bytes. Each key goes to the partition Connect's producer would choose
 *   (murmur2 of the key), so MM2 and kmirror never leave two live values for one key in different partitions.
 * - On load every partition is read to its end and the newest value per key wins; keys of other connectors
 *   (MM2's checkpoint and heartbeat connectors share the topic) are ignored. `load` returns exactly what it read.
 * - What `commit` believes stored (`#stored`, which it compares with to skip unchanged positions) is never set back by
 *   an older read: a load replaces it with what it read (a key the read lacks is dropped), except each key a commit
 *   wrote after the load began, which keeps its value in memory. Such a key is marked with a generation when the
 *   commit starts (before its write: the read may be under way already) and again when its write is acknowledged (a
 *   commit begun before the load may end during its read, which may predate that write). Taking the read there could
 *   make a later rewind (a lower position, or -1 from `forget`) look stored already and be skipped: a restart would
 *   then resume from the position overwritten. A commit whose write fails takes its own marks back (it changed
 *   nothing in memory, so the read counts for those keys), and leaves its keys unknown (NaN, unless a commit wrote
 *   them since): their next commit writes them whatever it writes. `commit-marks.ts` keeps the marks, only while a
 *   load is under way.
 */
import type { FlowConfig } from '../config/types.ts'
import { decodeSourceOffsetKey, decodeSourceOffsetValue, encodeSourceOffsetKey, encodeSourceOffsetValue } from '../formats/connect-offset.ts'
import { partitionForKey } from '../formats/murmur2.ts'
import { CreateOutcomes, type AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import { CommitMarks } from './commit-marks.ts'
import { partitionKey } from '../topic-partition.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import { type HeldReadListener, readTopicToEnd } from '../kafka/topic-reader.ts'
import { transactionWaitMs } from '../config/transaction-timeout.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'

const SOURCE_CONNECTOR = 'MirrorSourceConnector'

/**
 * What `load` returns for a position forgotten (`forget`, or a copy rewound to a log start of 0): -1 stored. With
 * `forgotten`, such a partition starts at the source's log start, whatever `consumer.auto.offset.reset` says: its
 * position was forgotten because its copy starts again from a log start (a source topic created again), and starting
 * it at the log end would skip the new topic's first records.
 */
export const FORGOTTEN = -1

export interface LoadOptions {
  /** Commands that must change nothing: a missing topic means nothing stored (else it is created). */
  readonly readOnly?: boolean
  /** To the high watermark, waiting for open transactions (see `#readPositions`). */
  readonly waitForTransactions?: boolean
  /** Forgotten positions are returned as FORGOTTEN (the loads a data path starts partitions from); left out otherwise. */
  readonly forgotten?: boolean
}

interface PositionsRead {
  /** The last offset copied of each partition with a position. */
  readonly positions: Map<string, number>
  /** The partitions whose newest record is a forgotten position (-1). */
  readonly forgotten: ReadonlySet<string>
}

export class ProgressStore {
  readonly #flow: FlowConfig
  readonly #held: HeldReadListener | undefined
  readonly #admin: AdminClient
  readonly #fetcher: RecordFetcher
  readonly #writer: Pick<RecordWriter, 'write'> | null
  #partitions = 0
  /** What is stored (or being stored), per `partitionKey(topic, partition)` of the source. */
  readonly #stored = new Map<string, number>()
  /** The keys commits wrote while loads read (see the invariants). */
  readonly #marks = new CommitMarks()
  readonly #closing = new AbortController()

  /** HELD: told when a read waiting for transactions is held by one (the operator sees why a start waits). */
  constructor (flow: FlowConfig, targetAdmin: AdminClient, targetFetcher: RecordFetcher, targetWriter: Pick<RecordWriter, 'write'> | null, held?: HeldReadListener) {
    this.#held = held
    this.#flow = flow
    this.#admin = targetAdmin
    this.#fetcher = targetFetcher
    this.#writer = targetWriter
  }

  get topic (): string {
    return this.#flow.offsetStorageTopic
  }

  /**
   * Reads every stored position of this flow's source cluster. Creates the offsets topic first, unless
   * `readOnly` (commands that must change nothing), where a missing topic means nothing was stored.
   */
  async load (options: LoadOptions = {}): Promise<Map<string, number>> {
    const since = this.#marks.loadStarted()
    try {
      const read = await this.#read(options)
      if (read === null) return new Map()
      this.#takeRead(read.positions, since)
      const loaded = new Map(read.positions)
      if (options.forgotten === true) for (const tp of read.forgotten) loaded.set(tp, FORGOTTEN)
      return loaded
    } finally {
      this.#marks.loadEnded()
    }
  }

  /** What the offsets topic holds for this flow's source cluster; null when there is nothing to read (a new or missing topic). */
  async #read (options: LoadOptions): Promise<PositionsRead | null> {
    const topic = this.topic
    if (options.readOnly !== true) {
      const outcome = await this.#admin.createTopic({
        name: topic,
        partitions: this.#flow.offsetStoragePartitions,
        replicationFactor: this.#flow.offsetStorageReplicationFactor,
        replicationFactorKey: 'offset.storage.replication.factor',
        configs: { 'cleanup.policy': 'compact' }
      })
      if (outcome === CreateOutcomes.CREATED) {
        // Created just now, so empty: nothing to read (and a new topic's leaders are often not ready yet,
        // which cost a 250 ms retry in the read). Its partition count is the one it was created with.
        this.#partitions = this.#flow.offsetStoragePartitions
        return null
      }
    }
    const description = (await this.#admin.describeTopics([topic])).get(topic)
    if (description === undefined && options.readOnly === true) return null
    if (description === undefined) {
      throw new KmirrorError(ErrorCodes.PROGRESS, `the offsets topic ${topic} was created but cannot be described on cluster ${this.#flow.target.alias}`, { retriable: true })
    }
    this.#partitions = description.partitions
    return await this.#readPositions(options.waitForTransactions === true)
  }

  async #readPositions (waitForTransactions: boolean): Promise<PositionsRead> {
    // What the topic holds, and only that: a value this store wrote in an exactly-once round that was aborted since
    // (read_committed does not return it) must not be handed out as stored. WAIT_FOR_TRANSACTIONS (the loads a data
    // path resumes from: an assignment, a rewind, a lone start) reads to the high watermark: progress other members
    // committed after a transaction still open (theirs or a dead one's) counts too, so the read waits for it to end
    // rather than hand out older positions (which would copy their records twice). Other loads (commands, a start
    // whose group assignment reads again) take what is stable now.
    const read = new Map<string, number>()
    const forgotten = new Set<string>()
    await readTopicToEnd(this.#fetcher, this.topic, this.#partitions, (_, record) => {
      if (record.key === null) return
      const key = decodeSourceOffsetKey(record.key)
      if (key === null || key.connectorName !== SOURCE_CONNECTOR || key.cluster !== this.#flow.source.alias) return
      const offset = decodeSourceOffsetValue(record.value)
      const tp = partitionKey(key.topic, key.partition)
      read.delete(tp)
      forgotten.delete(tp)
      if (offset !== null && offset >= 0) read.set(tp, offset)
      else if (offset !== null) forgotten.add(tp)
    }, waitForTransactions
      ? { through: 'written', timeoutMs: transactionWaitMs(this.#flow), signal: this.#closing.signal, ...(this.#held === undefined ? {} : { held: this.#held }) }
      : { through: 'stable' })
    return { positions: read, forgotten }
  }

  /** The read becomes what is stored, but for the keys commits marked after the load began (generation SINCE). */
  #takeRead (read: ReadonlyMap<string, number>, since: number): void {
    const isWrittenSince = (tp: string): boolean => this.#marks.markedSince(tp, since)
    // Deleting the entry being visited is safe in a Map iteration.
    for (const tp of this.#stored.keys()) if (!read.has(tp) && !isWrittenSince(tp)) this.#stored.delete(tp)
    for (const [tp, offset] of read) if (!isWrittenSince(tp)) this.#stored.set(tp, offset)
  }

  /**
   * Exactly-once mode, after an aborted round: forgets what it believed stored (the aborted records) and reads the
   * committed positions again (the target reader is read_committed).
   */
  async reload (): Promise<Map<string, number>> {
    this.#stored.clear()
    return await this.load({ readOnly: true, waitForTransactions: true })
  }

  /** The flow stops: a load waiting for transactions to end gives up at once (a retriable error). */
  close (): void {
    this.#closing.abort(new KmirrorError(ErrorCodes.PROGRESS, `stopped reading ${this.topic}: the flow is stopping`, { retriable: true }))
  }

  /**
   * Forgets the stored positions of these partitions (of a source topic deleted and created again: its offsets start
   * again): -1 for each, whatever this store believes stored (another instance may have stored it), which reads
   * as FORGOTTEN here (the data path starts it at the log start) and as "no position" in MM2 3.7+ (its
   * `auto.offset.reset`; before 3.7, offset 0). Resolves once the target acknowledged them.
   */
  async forget (partitions: readonly { topic: string, partition: number }[]): Promise<void> {
    if (partitions.length === 0) return
    const positions = new Map(partitions.map(p => [partitionKey(p.topic, p.partition), { ...p, lastOffset: -1 }]))
    // A value unlike -1 makes `commit` write each one.
    for (const key of positions.keys()) this.#stored.set(key, Number.NaN)
    await this.commit(positions)
  }

  /**
   * Writes the positions that changed since the last commit; resolves once the target acknowledged them. UNTIL: the
   * group membership the positions were taken under; once it ended nothing more is sent and the commit fails FENCED
   * (record-writer.ts), as they may be another instance's partitions by then.
   */
  async commit (positions: ReadonlyMap<string, { topic: string, partition: number, lastOffset: number }>, until?: AbortSignal): Promise<number> {
    const byPartition = new Map<number, { key: Buffer, value: Buffer }[]>()
    const changed: [string, number][] = []
    for (const [tp, p] of positions) {
      // Back at offset 0 (copying again from a log start of 0): -1 stored, which reads as "from the start", so the
      // higher position stored before cannot skip the records again after a restart or a hand-over.
      const stored = this.#stored.get(tp)
      if (p.lastOffset < 0 ? stored === undefined : stored === p.lastOffset) continue
      const key = encodeSourceOffsetKey({ connectorName: SOURCE_CONNECTOR, cluster: this.#flow.source.alias, topic: p.topic, partition: p.partition })
      const partition = partitionForKey(key, this.#partitions)
      const list = byPartition.get(partition) ?? []
      list.push({ key, value: encodeSourceOffsetValue(p.lastOffset) })
      byPartition.set(partition, list)
      changed.push([tp, p.lastOffset])
    }
    if (changed.length === 0) return 0
    if (this.#writer === null) throw new KmirrorError(ErrorCodes.INTERNAL, 'this progress store was opened read-only')
    // Marked before the write (a load may be reading already) and after it (a load begun meanwhile may read what
    // the topic held before it landed).
    const keys = changed.map(([tp]) => tp)
    const before = new Map(keys.map(tp => [tp, this.#stored.get(tp)]))
    const token = this.#marks.writing(keys)
    const now = BigInt(Date.now())
    try {
      await this.#writer.write([...byPartition].map(([partition, records]) => ({
        topic: this.topic,
        partition,
        records: records.map(r => ({ key: r.key, value: r.value, headers: [], timestamp: now }))
      })), { until })
    } catch (err) {
      // A load under way takes what it reads for these keys, as without this write. What is stored is not known any
      // more (the write may have landed; a load that ended while it was under way kept the older value in memory
      // rather than the read): the next commit of each key writes it, unless a commit wrote it since.
      this.#marks.failed(keys, token)
      for (const [tp, value] of before) if (Object.is(this.#stored.get(tp), value)) this.#stored.set(tp, Number.NaN)
      throw err
    }
    for (const [tp, offset] of changed) {
      if (offset < 0) this.#stored.delete(tp)
      else this.#stored.set(tp, offset)
    }
    this.#marks.written(keys, token)
    return changed.length
  }
}
