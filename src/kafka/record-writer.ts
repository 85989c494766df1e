/**
 * Writes records to explicit partitions with an idempotent producer and acks=all, and reports the offset
 * each record received on the target.
 *
 * Invariants:
 * - One produce request carries at most one batch per partition, so a partition's records of one request get
 *   consecutive offsets from the returned base offset. That is what makes target offsets exact.
 * - A partition's records are split into chunks of at most `maxChunkBytes`, sent in order, one round after
 *   the other: chunk k+1 of a partition is only sent once chunk k is acknowledged.
 * - `write` resolves only when every record is acknowledged by all in-sync replicas.
 * - A record is only sent once the producer's metadata knows its partition: the library maps a partition beyond
 *   its cached partition count with a modulo, which after a topic grew would silently write records to the
 *   wrong partition until the cache expired.
 * - With a `fence`, no produce request goes out while it gives a reason: asked before each `Producer.send`, and
 *   again by every produce request the library sends for it, its own retries included (gated-requests.ts).
 * - A write belongs to the group membership it began under: it runs on the producer of its start, and fails FENCED
 *   once that producer was renewed (the membership was lost) or its `until` signal aborted, whatever the lease of a
 *   newer membership says (invariant 31: a lease is not a membership). Its records, or a progress position taken
 *   under the lost membership, would otherwise land after what the partitions' next owner wrote.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { Producer, ProduceAcks, type CompressionAlgorithmValue, type MessageToProduce } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isUnknownTopicMetadata, toKmirrorError } from './errors.ts'
import { partitionKey } from '../topic-partition.ts'
import { toOffset } from './offsets.ts'
import { withGrant } from './acl-grant.ts'
import { describePrincipal } from './principal.ts'
import { toMessage, type OutRecord } from './record-batch.ts'
import { watchedLibraryClient } from './answering-first.ts'
import { gateRequests, PRODUCE_API_KEY } from './gated-requests.ts'
import { WriteGate } from './write-gate.ts'

export type { OutRecord } from './record-batch.ts'


export interface PartitionBatch {
  readonly topic: string
  readonly partition: number
  readonly records: readonly OutRecord[]
}

/** Records `start` to `end - 1` of input batch `batch` were acknowledged, at target offsets from `baseOffset` on. */
export interface AckedChunk {
  readonly batch: number
  readonly start: number
  readonly end: number
  readonly baseOffset: number
}

/** Hears of every acknowledged round before the next one is sent (progress can then advance mid-write). */
export type OnAcked = (chunks: readonly AckedChunk[]) => Promise<void> | void

/** Record `start` of the batch, and those after it up to the next segment, got offsets from `baseOffset` on. */
export interface OffsetSegment {
  readonly start: number
  readonly baseOffset: number
}

export interface WriteOptions {
  /** Hears of every acknowledged round before the next one is sent. */
  readonly onAcked?: OnAcked
  /**
   * Aborted when what is written stops being this instance's to write (the group membership it was taken under was
   * lost): no request goes out after that, and the write fails FENCED.
   */
  readonly until?: AbortSignal
}

/** How long a write asks again for the metadata of a topic the broker does not know yet (`#metadata`). */
const UNKNOWN_TOPIC_WAIT_MS = 1_500

const COMPRESSIONS: Record<string, CompressionAlgorithmValue> = { none: 'none', gzip: 'gzip', snappy: 'snappy', lz4: 'lz4', zstd: 'zstd' }

export interface RecordWriterOptions {
  readonly idempotent: boolean
  /** Uncompressed bytes per partition per request; kept well under the brokers' default 1 MiB message limit. */
  readonly maxChunkBytes: number
  /** Names the cluster in messages ("cluster B") and its alias in hints; the client id when not given. */
  readonly cluster?: ClusterContext
  /**
   * Asked synchronously right before each produce request, the library's retries included: a reason (this
   * instance's group lease ran out) sends nothing and throws FENCED, retriable (the membership is lost and joined
   * again; the work goes to its new owner).
   */
  readonly fence?: () => string | null
}

export class RecordWriter {
  #producer: Producer
  readonly #props: ClientProps
  readonly #clientId: string
  readonly #compression: CompressionAlgorithmValue
  readonly #options: RecordWriterOptions
  readonly #cluster: ClusterContext
  readonly #principal: string

  constructor (props: ClientProps, clientId: string, options: RecordWriterOptions) {
    // Trimmed as Java's ConfigDef trims it (validation accepts `lz4 `).
    const compression = COMPRESSIONS[(props['compression.type'] ?? 'none').trim().toLowerCase()]
    if (compression === undefined) {
      throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `compression.type=${props['compression.type']} of ${clientId} is not supported: use none, gzip, snappy, lz4 or zstd`)
    }
    this.#options = options
    this.#props = props
    this.#clientId = clientId
    this.#compression = compression
    this.#cluster = options.cluster ?? { label: clientId }
    this.#principal = describePrincipal(props, this.#cluster.alias ?? clientId)
    this.#producer = this.#createProducer()
  }

  #createProducer (): Producer {
    const producer = watchedLibraryClient(new Producer({
      ...toConnectOptions(this.#props, this.#clientId),
      idempotent: this.#options.idempotent,
      acks: ProduceAcks.ALL,
      compression: this.#compression,
      autocreateTopics: false
    }), this.#cluster.label)
    // The library sends a produce again by itself (retries, stale metadata, a fresh producer id), without coming
    // back here: each of its requests asks the lease as it goes out, so none is sent past it.
    if (this.#options.fence !== undefined) {
      const gate = new WriteGate(this.#options.fence, this.#cluster)
      gateRequests(producer.connections, new Set([PRODUCE_API_KEY]), () => { gate.check() })
    }
    return producer
  }

  /**
   * A lost membership: the producer is replaced, and the old one closed at once, failing the sends it still retries.
   * The lease gate alone would let such a retry out once the next membership's lease holds, after the records the
   * partition's new owner wrote meanwhile (invariant 31: a lease is not a membership).
   */
  renew (): void {
    const old = this.#producer
    this.#producer = this.#createProducer()
    old.close(true).catch(() => undefined)
  }

  /**
   * Returns, for each input batch, the segments that give every record's target offset. `onAcked`, when given,
   * hears of each acknowledged round (and may await, e.g. to store progress) before the next round is sent.
   */
  async write (batches: readonly PartitionBatch[], options: WriteOptions = {}): Promise<OffsetSegment[][]> {
    const producer = this.#producer
    const ended = this.#membershipEnded(producer, options.until)
    if (ended !== null) throw ended
    try {
      return await this.#write(producer, batches, options)
    } catch (err) {
      // The library's failure of a producer closed by `renew` (or a send refused once `until` aborted) is the
      // membership's end, and is told as such.
      throw this.#membershipEnded(producer, options.until) ?? err
    }
  }

  async #write (producer: Producer, batches: readonly PartitionBatch[], { onAcked, until }: WriteOptions): Promise<OffsetSegment[][]> {
    await this.#ensurePartitionsKnown(producer, batches)
    const chunked = batches.map(b => splitIntoChunks(b.records, this.#options.maxChunkBytes))
    const segments: OffsetSegment[][] = batches.map(() => [])
    const rounds = Math.max(0, ...chunked.map(c => c.length))
    for (let round = 0; round < rounds; round++) {
      const messages: MessageToProduce[] = []
      const owners: number[] = []
      for (let i = 0; i < batches.length; i++) {
        const chunk = chunked[i]![round]
        if (chunk === undefined) continue
        const batch = batches[i]!
        for (let j = chunk.start; j < chunk.end; j++) messages.push(toMessage(batch.records[j]!, batch.topic, batch.partition))
        owners.push(i)
      }
      const baseOffsets = await this.#send(producer, messages, until)
      const acked: AckedChunk[] = []
      for (const i of owners) {
        const batch = batches[i]!
        const base = baseOffsets.get(partitionKey(batch.topic, batch.partition))
        if (base === undefined) {
          throw new KmirrorError(ErrorCodes.PRODUCE, `${this.#cluster.label} acknowledged no offset for ${batch.topic}-${batch.partition}`, { retriable: true })
        }
        const chunk = chunked[i]![round]!
        segments[i]!.push({ start: chunk.start, baseOffset: base })
        acked.push({ batch: i, start: chunk.start, end: chunk.end, baseOffset: base })
      }
      if (onAcked !== undefined) await onAcked(acked)
    }
    return segments
  }

  /** FENCED when a write that began on PRODUCER may send nothing more: renewed since, or UNTIL aborted; else null. */
  #membershipEnded (producer: Producer, until: AbortSignal | undefined): KmirrorError | null {
    if (producer === this.#producer && until?.aborted !== true) return null
    return new KmirrorError(ErrorCodes.FENCED, `not writing to ${this.#cluster.label}: the group membership this write began under was lost; what it writes may be another instance's now`, { retriable: true, details: { fence: 'membership lost' } })
  }

  async #ensurePartitionsKnown (producer: Producer, batches: readonly PartitionBatch[]): Promise<void> {
    const needed = new Map<string, number>()
    for (const b of batches) needed.set(b.topic, Math.max(needed.get(b.topic) ?? 0, b.partition + 1))
    const topics = [...needed.keys()]
    const short = (metadata: { topics: Map<string, { partitionsCount: number }> }): string[] =>
      topics.filter(t => (metadata.topics.get(t)?.partitionsCount ?? 0) < needed.get(t)!)
    try {
      let missing = short(await this.#metadata(producer, topics, false))
      if (missing.length > 0) missing = short(await this.#metadata(producer, topics, true))
      if (missing.length > 0) {
        throw new KmirrorError(ErrorCodes.PRODUCE, `${this.#cluster.label} does not have the partitions to write yet (${missing.map(t => `${t} needs ${needed.get(t)}`).join(', ')}); waiting for the remote topic to grow`, { retriable: true })
      }
    } catch (err) {
      throw this.#refused(toKmirrorError(err, ErrorCodes.PRODUCE, `read the metadata of ${this.#cluster.label} before writing`, this.#cluster), topics)
    }
  }

  /**
   * The metadata of TOPICS. A topic the broker asked does not know yet (created a moment ago: CreateTopics answers
   * once the controller has it, a broker's cache follows) is asked again, fresh, for up to UNKNOWN_TOPIC_WAIT_MS, as
   * the Java producer waits for a topic's metadata: a first write right after the creation is no failure.
   */
  async #metadata (producer: Producer, topics: string[], forceUpdate: boolean): Promise<Awaited<ReturnType<Producer['metadata']>>> {
    for (let waited = 0, pause = 50; ; waited += pause, pause *= 2) {
      try {
        return await producer.metadata({ topics, forceUpdate: forceUpdate || waited > 0 })
      } catch (err) {
        if (!isUnknownTopicMetadata(err) || waited >= UNKNOWN_TOPIC_WAIT_MS) throw err
        await delay(pause)
      }
    }
  }

  async #send (producer: Producer, messages: MessageToProduce[], until: AbortSignal | undefined): Promise<Map<string, number>> {
    const ended = this.#membershipEnded(producer, until)
    if (ended !== null) throw ended
    const fenced = this.#options.fence?.() ?? null
    if (fenced !== null) {
      throw new KmirrorError(ErrorCodes.FENCED, `not writing ${messages.length} record(s) to ${this.#cluster.label}: ${fenced}; this instance writes nothing until its lease holds again or it is assigned work anew`, { retriable: true, details: { fence: fenced } })
    }
    try {
      const result = await producer.send({ messages })
      const out = new Map<string, number>()
      for (const o of result.offsets ?? []) out.set(partitionKey(o.topic, o.partition), toOffset(o.offset))
      return out
    } catch (err) {
      const topics = [...new Set(messages.map(m => m.topic))]
      throw this.#refused(toKmirrorError(err, ErrorCodes.PRODUCE, `write ${messages.length} record(s) to ${topics.join(', ')} on ${this.#cluster.label}`, this.#cluster), topics)
    }
  }

  /** An authorization refusal names the grant: WRITE on the topics written (it implies the DESCRIBE metadata needs). */
  #refused (err: KmirrorError, topics: readonly string[]): KmirrorError {
    const names = [...new Set(topics)]
    return withGrant(err, `writing to ${names.join(', ')} on ${this.#cluster.label}`, { operation: 'WRITE', resourceType: 'topic', names }, this.#principal, this.#cluster)
  }

  async close (): Promise<void> {
    await this.#producer.close(true).catch(() => undefined)
  }
}

function recordBytes (r: OutRecord): number {
  let n = 70 + (r.key?.length ?? 0) + (r.value?.length ?? 0)
  for (const [k, v] of r.headers) n += 10 + k.length + (v?.length ?? 0)
  return n
}

function splitIntoChunks (records: readonly OutRecord[], maxBytes: number): { start: number, end: number }[] {
  const chunks: { start: number, end: number }[] = []
  let start = 0
  let bytes = 0
  for (let i = 0; i < records.length; i++) {
    const size = recordBytes(records[i]!)
    if (i > start && bytes + size > maxBytes) {
      chunks.push({ start, end: i })
      start = i
      bytes = 0
    }
    bytes += size
  }
  if (start < records.length) chunks.push({ start, end: records.length })
  return chunks
}

/** The target offset of record `index` of a batch, from the segments `write` returned for it. */
export function targetOffsetOf (segments: readonly OffsetSegment[], index: number): number {
  let segment = segments[0]!
  for (const s of segments) {
    if (s.start > index) break
    segment = s
  }
  return segment.baseOffset + (index - segment.start)
}
