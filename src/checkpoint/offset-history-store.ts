/**
 * The durable offset history of a flow: one record per run of each partition in
 * `mm2-offset-history.<source>.internal` on the TARGET cluster, so that translation works from the target
 * alone when the source cluster is gone (failover), survives restarts, and covers groups far behind.
 *
 * Invariants:
 * - A run's record is written when the run starts (length -1) and again with its length when the next run of
 *   the partition starts; compaction keeps one record per run.
 * - Only run starts are stored: storage grows with discontinuities (transactions, compaction gaps, restarts),
 *   not with records. `trim` removes runs entirely below the source's log start, keeping the one covering it.
 * - The name has MM2's internal shape (`mm2-…internal`), so neither MM2 nor kmirror ever replicates it.
 * - Runs are appended only from syncs of acknowledged records (the data path feeds them after acks=all).
 * - Each partition's runs are appended by the one instance that copies it. Another instance (several kmirror
 *   share a flow) keeps the history of the partitions it does not copy current with `follow`, which reads the
 *   topic from where its last read ended, so its checkpoints and group offset syncs translate exactly too. The
 *   follow at an assignment, the last before the partitions it brings are owned (and no longer rebuilt from the
 *   topic), reads to the high watermark, waiting for transactions open there, as the progress load beside it does.
 * - Each run's records name the source topic id its records were copied from (when the source gives ids), the
 *   start, extent and closing records alike: `copiedFrom` tells a partition resumed from a stored position which
 *   topic that position belongs to (ARCHITECTURE invariant 46).
 */
import { transactionWaitMs } from '../config/transaction-timeout.ts'
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { decodeOffsetHistoryKey, decodeOffsetHistoryValue, encodeOffsetHistoryKey, encodeOffsetHistoryValue } from '../formats/offset-history.ts'
import { CreateOutcomes, type AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import { oneAtATime } from '../one-at-a-time.ts'
import { parsePartitionKey, partitionKey } from '../topic-partition.ts'
import type { OutRecord, RecordWriter } from '../kafka/record-writer.ts'
import { type HeldReadListener, readTopicFrom } from '../kafka/topic-reader.ts'
import { InternalTopicHeads } from '../policy/replication-policy.ts'
import type { OffsetSyncEntry } from '../replication/offset-sync-tracker.ts'
import { PartitionOffsetHistory, type RunStart } from './offset-history.ts'
import { currentRunStarts, type StoredRun } from './stored-runs.ts'

export function offsetHistoryTopic (sourceAlias: string): string {
  return `${InternalTopicHeads.OFFSET_HISTORY}${sourceAlias}.internal`
}

/** An open run of a partition, to close it when the next starts; `persisted` = length last written. */
interface OpenRun {
  readonly upstream: number
  readonly downstream: number
  persisted: number
  readonly sourceTopicId?: string
}

export class OffsetHistoryStore {
  readonly topic: string
  readonly #flow: FlowConfig
  readonly #held: HeldReadListener | undefined
  readonly #admin: Pick<AdminClient, 'createTopic' | 'describeTopics'>
  readonly #fetcher: Pick<RecordFetcher, 'fetch' | 'listOffsets'> | null
  readonly #writer: Pick<RecordWriter, 'write'> | null
  readonly #histories = new Map<string, PartitionOffsetHistory>()
  /** The open (last) run of each partition. */
  readonly #openRuns = new Map<string, OpenRun>()
  /** Every run read from the topic (by `load` and `follow`), per partition and run start. */
  readonly #read = new Map<string, Map<number, StoredRun>>()
  /** Per partition, the source topic id its last run (its newest copy) was copied from, when that run names one. */
  readonly #copiedFrom = new Map<string, string>()
  readonly #closing = new AbortController()
  /** Where the next `follow` continues reading; null before `load` read the topic. */
  #next: number | null = null
  /** Tombstones of forgotten partitions (`forget`), written with the next write of this store. */
  #forgotten: OutRecord[] = []
  /** Writes started so far; writes carrying forgotten tombstones in flight; keys written meanwhile (`#write`). */
  #writes = 0
  #tombstoning = 0
  readonly #rewritten = new Map<string, number>()
  /** Bumped by `membershipLost`: a write begun before it puts no tombstone back when it fails. */
  #losses = 0
  /**
   * Partitions whose history in memory a lost membership may have left unlike the topic: rebuilt from the topic (or
   * dropped, when it has nothing of them) at the next follow that finds them not owned; `forget` does nothing for them.
   */
  readonly #stale = new Set<string>()

  /** HELD: told when a read waiting for transactions is held by one (the operator sees why an assignment waits). */
  constructor (flow: FlowConfig, targetAdmin: Pick<AdminClient, 'createTopic' | 'describeTopics'>, targetFetcher: Pick<RecordFetcher, 'fetch' | 'listOffsets'> | null, targetWriter: Pick<RecordWriter, 'write'> | null, held?: HeldReadListener) {
    this.#held = held
    this.#flow = flow
    this.#admin = targetAdmin
    this.#fetcher = targetFetcher
    this.#writer = targetWriter
    this.topic = offsetHistoryTopic(flow.source.alias)
  }

  /**
   * Reads every stored run. Creates the topic first, unless `readOnly` (commands that must change nothing),
   * where a missing topic simply means no history. WAIT_FOR_TRANSACTIONS (a lone start, whose progress load waits the
   * same way): to the high watermark, waiting for transactions open there, so a round an earlier process committed
   * counts in the history as in the progress (its new copy's run names the id its positions belong to).
   */
  async load (options: { readOnly?: boolean, waitForTransactions?: boolean } = {}): Promise<void> {
    if (options.readOnly === true) {
      if (!(await this.#admin.describeTopics([this.topic])).has(this.topic)) return
    } else {
      const outcome = await this.#admin.createTopic({
        name: this.topic, partitions: 1, replicationFactor: this.#flow.checkpointsTopicReplicationFactor, replicationFactorKey: 'checkpoints.topic.replication.factor', configs: { 'cleanup.policy': 'compact' }
      })
      // Created just now, so empty: no history to read.
      if (outcome === CreateOutcomes.CREATED) return
    }
    if (this.#fetcher === null) return
    await this.#readAndRebuild(() => true, options.waitForTransactions === true)
  }

  /**
   * Reads what was appended since the last read (by the instances copying other partitions) and rebuilds the
   * history of every partition `owned` says this instance does not copy. One fetch when nothing is new.
   */
  async follow (owned: (tp: string) => boolean, options: { readonly waitForTransactions?: boolean } = {}): Promise<void> {
    if (this.#fetcher === null) return
    await this.#readAndRebuild(tp => !owned(tp), options.waitForTransactions === true)
  }

  /**
   * Reads what is new and rebuilds the partitions REBUILD names. One read at a time: all continue from `#next` and
   * apply records in offset order, so two at once (the assignment's follow, which may wait for transactions, and a
   * job's) could apply an older record of a key after a newer one, or move `#next` back.
   */
  readonly #readAndRebuild = oneAtATime(async (rebuild: (tp: string) => boolean, written: boolean) => {
    for (const tp of await this.#readNew(written)) {
      if (!rebuild(tp)) continue
      this.#stale.delete(tp)
      this.#rebuild(tp, this.#read.get(tp)!)
    }
    for (const tp of this.#stale) {
      if (!rebuild(tp)) continue
      this.#stale.delete(tp)
      const stored = this.#read.get(tp)
      if (stored !== undefined && stored.size > 0) this.#rebuild(tp, stored)
      else this.#dropMemory(tp)
    }
  })

  /**
   * Reads the topic from `#next` to its end into `#read`; returns the partitions with new records. WRITTEN: to
   * the high watermark, waiting for transactions open there (topic-reader.ts): a follow at an assignment is the
   * last that rebuilds the partitions it hands over, so a run their last owner committed behind another member's
   * open round (exactly-once: history records are part of the round's transaction) must not be missed.
   */
  async #readNew (written = false): Promise<Set<string>> {
    const touched = new Set<string>()
    const ends = await readTopicFrom(this.#fetcher as RecordFetcher, this.topic, 1, new Map(this.#next === null ? [] : [[0, this.#next]]), (_, record) => {
      if (record.key === null) return
      const key = decodeOffsetHistoryKey(record.key)
      const tp = partitionKey(key.topic, key.partition)
      const byStart = this.#read.get(tp) ?? new Map<number, StoredRun>()
      this.#read.set(tp, byStart)
      touched.add(tp)
      if (record.value === null) byStart.delete(key.upstreamOffset)
      else {
        const value = decodeOffsetHistoryValue(record.value)
        const started = value.open && value.length === 1 ? record.offset : byStart.get(key.upstreamOffset)?.startedAt ?? -1
        const id = value.sourceTopicId
        byStart.set(key.upstreamOffset, { downstream: value.downstreamOffset, length: value.length, open: value.open, at: record.offset, startedAt: started, ...(id === undefined ? {} : { sourceTopicId: id }) })
      }
    }, written ? { through: 'written', timeoutMs: transactionWaitMs(this.#flow), signal: this.#closing.signal, ...(this.#held === undefined ? {} : { held: this.#held }) } : {})
    this.#next = ends.get(0) ?? this.#next
    return touched
  }

  #rebuild (tp: string, byStart: Map<number, StoredRun>): void {
    const history = new PartitionOffsetHistory()
    const starts = currentRunStarts(byStart)
    for (const [i, upstream] of starts.entries()) {
      const run = byStart.get(upstream)!
      const previous = i > 0 ? byStart.get(starts[i - 1]!)! : undefined
      const previousEnd = previous !== undefined && !previous.open ? starts[i - 1]! + previous.length - 1 : -1
      history.addRunStart(upstream, run.downstream, previousEnd)
      if (run.length > 0) history.markReplicatedTo(upstream + run.length, run.downstream + run.length)
    }
    this.#histories.set(tp, history)
    const last = starts.at(-1)
    const run = last === undefined ? undefined : byStart.get(last)!
    this.#noteCopiedFrom(tp, run?.sourceTopicId)
    if (last === undefined || run === undefined) {
      this.#openRuns.delete(tp)
      return
    }
    this.#openRuns.set(tp, { upstream: last, downstream: run.downstream, persisted: run.length, ...(run.sourceTopicId === undefined ? {} : { sourceTopicId: run.sourceTopicId }) })
  }

  #dropMemory (tp: string): void {
    this.#histories.delete(tp)
    this.#openRuns.delete(tp)
    this.#copiedFrom.delete(tp)
  }

  #noteCopiedFrom (tp: string, id: string | undefined): void {
    if (id === undefined) this.#copiedFrom.delete(tp)
    else this.#copiedFrom.set(tp, id)
  }

  /**
   * The source topic id the partition's last copy came from (its last run, as this instance appended it or last
   * rebuilt it from the topic), if that run names one: a position stored by that copy belongs to that topic. None for
   * a run written without an id (a source before Kafka 2.8, a kmirror before history version 1), or no run.
   */
  copiedFrom (tp: string): string | undefined {
    return this.#copiedFrom.get(tp)
  }

  /** The flow stops: a follow waiting for transactions to end gives up at once (a retriable error). */
  close (): void {
    this.#closing.abort(new KmirrorError(ErrorCodes.PROGRESS, `stopped reading ${this.topic}: the flow is stopping`, { retriable: true }))
  }

  /** The partitions with a history, as `{ topic, partition }`. */
  partitions (): { topic: string, partition: number }[] {
    return [...this.#histories.keys()].map(tp => {
      return parsePartitionKey(tp)
    })
  }

  history (topic: string, partition: number): PartitionOffsetHistory | undefined {
    return this.#histories.get(partitionKey(topic, partition))
  }

  /**
   * Feeds acknowledged syncs: run starts are stored (closing the run before), continuations extend the run. UNTIL:
   * the group membership they were taken under; nothing is sent once it ended.
   */
  async append (entries: readonly OffsetSyncEntry[], until?: AbortSignal): Promise<void> {
    const records: OutRecord[] = []
    const timestamp = BigInt(Date.now())
    for (const e of entries) {
      const tp = partitionKey(e.topic, e.partition)
      let history = this.#histories.get(tp)
      if (history === undefined) {
        history = new PartitionOffsetHistory()
        this.#histories.set(tp, history)
      }
      if (!e.runStart) {
        history.markReplicatedTo(e.upstreamOffset + 1, e.downstreamOffset + 1)
        continue
      }
      const open = this.#openRuns.get(tp)
      if (open !== undefined && e.previousUpstream >= open.upstream && e.previousUpstream < e.upstreamOffset) {
        records.push(this.#record(e.topic, e.partition, { ...open, length: e.previousUpstream - open.upstream + 1, open: false }, timestamp))
      }
      // A re-copy (a restart before the last run, a remote topic created again, a source topic created again)
      // replaces runs; their stored records go too, or the next reload would bring them back and map the new
      // copy's offsets through the old one's.
      const replaced = history.addRunStart(e.upstreamOffset, e.downstreamOffset, e.previousUpstream)
      if (replaced.length > 0) records.push(...this.#tombstones(tp, e, replaced))
      const run: OpenRun = { upstream: e.upstreamOffset, downstream: e.downstreamOffset, persisted: 1, ...(e.sourceTopicId === undefined ? {} : { sourceTopicId: e.sourceTopicId }) }
      this.#openRuns.set(tp, run)
      this.#noteCopiedFrom(tp, e.sourceTopicId)
      records.push(this.#record(e.topic, e.partition, { ...run, length: 1, open: true }, timestamp))
    }
    await this.#write(records, true, until)
  }

  /**
   * A partition copied again into a remote topic created again, or from a source topic created again: its runs map
   * into a topic that is gone. Forgotten now, so nothing translates through them (it translates as not replicated
   * until the new copy's first record), and deleted in the topic with this store's next write (any partition's),
   * so other instances and reloads forget them too; the new copy's first run deletes them as well (`addRunStart`).
   */
  forget (topic: string, partition: number): void {
    const tp = partitionKey(topic, partition)
    // (a lost membership's data path, still ending its round: the partition is not this instance's to forget)
    if (this.#stale.has(tp)) return
    const keys = new Set([...(this.#histories.get(tp)?.runs ?? []).map(r => r.upstream), ...(this.#read.get(tp)?.keys() ?? [])])
    this.#dropMemory(tp)
    const timestamp = BigInt(Date.now())
    for (const upstream of keys) this.#forgotten.push(this.#tombstone(topic, partition, upstream, timestamp))
  }

  /**
   * The group membership was lost. The tombstones still queued (and those of a write under way, should it fail) are
   * dropped, not written under the next membership, where one could land after the partition's next owner wrote a
   * run of the same key (a copy again from offset 0) and delete it; an owner that copies the partition again deletes
   * the old runs itself (`addRunStart`). What memory holds of the lost membership's partitions (forgotten, or runs
   * whose write the loss cut) may differ from the topic: each is rebuilt from the topic (or dropped, when it has
   * nothing of it) at the next follow that finds it not owned (the one of an assignment reads before its partitions
   * are added), so `copiedFrom` names the copy the stored positions belong to, and a source topic created again
   * meanwhile is seen as such. Until then `forget` does nothing for it (the lost membership's round still ending).
   */
  membershipLost (): void {
    this.#forgotten = []
    this.#losses++
    // Memory's partitions, and those read (a forgotten one is no longer in memory; one never read back yet is rebuilt
    // anyway once its records are read).
    for (const tp of this.#histories.keys()) this.#stale.add(tp)
    for (const tp of this.#read.keys()) this.#stale.add(tp)
  }

  /**
   * Writes RECORDS after the tombstones of forgotten partitions (unless WITH_FORGOTTEN is false: the trim job's
   * writes); those stay queued until a write took them. Writes may overlap (the progress flush beside the syncs;
   * they cannot wait for each other: in exactly-once mode one may wait for the round the other is part of). So a
   * failed write puts back only the tombstones whose key no later write carried a record for: put back behind that
   * record, a tombstone would delete the new copy's run.
   */
  async #write (records: readonly OutRecord[], withForgotten = true, until?: AbortSignal): Promise<void> {
    if (this.#writer === null) return
    const forgotten = withForgotten ? this.#forgotten : []
    if (records.length === 0 && forgotten.length === 0) return
    if (withForgotten) this.#forgotten = []
    const seq = ++this.#writes
    const losses = this.#losses
    if (this.#tombstoning > 0) for (const r of records) if (r.value !== null && r.key !== null) this.#rewritten.set(r.key.toString('hex'), seq)
    if (forgotten.length > 0) this.#tombstoning++
    try {
      await this.#writer.write([{ topic: this.topic, partition: 0, records: [...forgotten, ...records] }], { until })
    } catch (err) {
      const putBack = losses !== this.#losses ? [] : forgotten.filter(t => (this.#rewritten.get(t.key!.toString('hex')) ?? 0) <= seq)
      this.#forgotten = [...putBack, ...this.#forgotten]
      throw err
    } finally {
      if (forgotten.length > 0 && --this.#tombstoning === 0) this.#rewritten.clear()
    }
  }

  /** The record of RUN of a partition, with its LENGTH so far and whether it is still OPEN. */
  #record (topic: string, partition: number, run: { upstream: number, downstream: number, length: number, open: boolean, sourceTopicId?: string }, timestamp: bigint): OutRecord {
    const { upstream, downstream, length, open, sourceTopicId } = run
    return {
      key: encodeOffsetHistoryKey({ topic, partition, upstreamOffset: upstream }),
      value: encodeOffsetHistoryValue({ downstreamOffset: downstream, length, open, ...(sourceTopicId === undefined ? {} : { sourceTopicId }) }),
      headers: [],
      timestamp
    }
  }

  /**
   * Tombstones for the runs a re-copy from E replaced: those of the history, and those stored that it lacks (left
   * out at its last rebuild, or written by an instance that copied the partition before); not E's own key.
   */
  #tombstones (tp: string, e: OffsetSyncEntry, replaced: readonly RunStart[]): OutRecord[] {
    const keys = new Set(replaced.map(r => r.upstream))
    for (const [upstream, run] of this.#read.get(tp) ?? []) {
      if (upstream >= e.upstreamOffset || run.downstream >= e.downstreamOffset) keys.add(upstream)
    }
    keys.delete(e.upstreamOffset)
    const timestamp = BigInt(Date.now())
    return [...keys].map(upstream => this.#tombstone(e.topic, e.partition, upstream, timestamp))
  }

  #tombstone (topic: string, partition: number, upstreamOffset: number, timestamp: bigint): OutRecord {
    return { key: encodeOffsetHistoryKey({ topic, partition, upstreamOffset }), value: null, headers: [], timestamp }
  }

  /**
   * At a progress flush, after the flush's syncs were appended: stores how far each open run has grown, so a
   * restarted kmirror knows the extent of the last run, and records the replication positions (`positions`:
   * next source offset per partition), past whose last copied record the offsets are gaps. UNTIL: the group
   * membership the positions were taken under (progress-flusher.ts); nothing is sent once it ended, as an extent
   * stored after the next owner's could shrink its run.
   */
  async checkpointExtents (positions: ReadonlyMap<string, number>, until?: AbortSignal): Promise<void> {
    const records: OutRecord[] = []
    const raised: { open: OpenRun, length: number }[] = []
    const timestamp = BigInt(Date.now())
    for (const [tp, position] of positions) {
      const history = this.#histories.get(tp)
      const open = this.#openRuns.get(tp)
      if (history === undefined || open === undefined) continue
      history.markConsumedTo(position)
      const length = history.replicatedEnd - open.upstream
      if (length <= open.persisted) continue
      raised.push({ open, length })
      const { topic, partition } = parsePartitionKey(tp)
      records.push(this.#record(topic, partition, { ...open, length, open: true }, timestamp))
    }
    await this.#write(records, true, until)
    // Raised once stored only: a failed write is written again by the next flush, whose positions are otherwise
    // stored past the stored extent (gaps after a restart). Two flushes at once may both write one (compacted).
    for (const r of raised) r.open.persisted = Math.max(r.open.persisted, r.length)
  }

  /** Removes runs entirely below each partition's source log start (tombstones), keeping the covering one. */
  async trim (logStarts: ReadonlyMap<string, number>): Promise<number> {
    const tombstones: OutRecord[] = []
    const timestamp = BigInt(Date.now())
    for (const [tp, logStart] of logStarts) {
      const history = this.#histories.get(tp)
      if (history === undefined) continue
      const before = history.runs.map(r => r.upstream)
      history.trimBelow(logStart)
      const kept = new Set(history.runs.map(r => r.upstream))
      const { topic, partition } = parsePartitionKey(tp)
      for (const upstream of before) {
        if (!kept.has(upstream)) tombstones.push(this.#tombstone(topic, partition, upstream, timestamp))
      }
    }
    // Without the forgotten tombstones: in exactly-once mode this write waits for the round in flight, and would
    // land them after that round's new runs of the same keys.
    await this.#write(tombstones, false)
    return tombstones.length
  }
}
