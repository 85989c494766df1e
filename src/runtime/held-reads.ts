/**
 * What the operator is told while a start or an assignment waits on a transaction open on one of the flow's
 * internal topics on the target (topic-reader.ts `HeldReadListener`). The progress and history reads that resume
 * the data path wait for such a transaction to end (what it holds may be progress or history another member
 * committed behind it: resuming without it would copy records twice or translate from an older run), up to the
 * transaction timeout and more. Silent, that wait looks like a hang; told, it names the topic, the partitions,
 * how long it may last and the tool lines that find and end the transaction.
 *
 * Invariants:
 * - One warning per topic and transaction: a read held where one still held waits already (same topic, partition and
 *   offset: a reload beside an assignment's read) is told at info, naming the warning above. A transaction holding
 *   the progress and the history topic is warned of once per topic (nothing tells it is one transaction). A read
 *   held on by another transaction (a partition told before, held now at another offset: its transaction ended and
 *   a later one holds it) is warned of again, with that transaction's offsets: the tool lines of the first would
 *   find nothing open any more. A partition held that was not told before (one transaction spans partitions the
 *   read reaches at different times) is told at info.
 * - `status` lists exactly the reads held now (told, not yet ended, and still held: `changed`), with the partitions
 *   held now, for `/status` and `/healthz`: a start that waits is seen there too, not only in the log.
 */
import type { HeldRead, HeldReadListener } from '../kafka/topic-reader.ts'
import { toolCommand, type ToolCluster } from '../kafka/tool-command.ts'
import type { Logger } from '../logger.ts'
import type { HeldReadStatus } from './flow-status.ts'

/** How many held partitions a warning names (it counts the rest). */
const NAMED_AT_MOST = 5

export class HeldReads implements HeldReadListener {
  readonly #log: Logger
  readonly #cluster: ToolCluster & { readonly alias: string }
  /** The reads held now (told, not ended, not moved on): the partitions held and since when the first was (epoch ms). */
  readonly #current = new Map<HeldRead, { readonly since: number, readonly partitions: HeldRead['partitions'] }>()
  /** Per read told and not ended: the offset each partition it was told held at. */
  readonly #told = new Map<HeldRead, Map<number, number>>()

  constructor (log: Logger, cluster: ToolCluster & { readonly alias: string }) {
    this.#log = log
    this.#cluster = cluster
  }

  held (read: HeldRead): void {
    const same = this.#sameTransaction(read)
    this.#current.set(read, holding(read.partitions))
    this.#told.set(read, new Map(read.partitions.map(p => [p.partition, p.offset])))
    const alias = this.#cluster.alias
    const fields = { topic: read.topic, cluster: alias, partitions: read.partitions.map(p => p.partition), heldMs: read.heldMs, timeoutMs: read.timeoutMs }
    if (same !== null) {
      this.#log.info(fields, `reading ${read.topic} on cluster ${alias} also waits for the transaction open at partition ${same.partition} offset ${same.offset} ` +
        '(told above: "... waits for a transaction still open there")')
      return
    }
    this.#log.warn(fields, heldMessage(read, this.#cluster))
  }

  /**
   * The partitions READ is held at now; none, it moved on and is shown no more. A partition told before and held now
   * at another offset is another transaction: warned of, unless another read held now told that hold; a partition
   * not told before is told at info (see the invariants).
   */
  changed (read: HeldRead, partitions: HeldRead['partitions']): void {
    if (partitions.length === 0) {
      this.#current.delete(read)
      return
    }
    const told = this.#told.get(read) ?? new Map<number, number>()
    this.#current.delete(read)
    const moved = partitions.filter(p => told.has(p.partition) && told.get(p.partition) !== p.offset && !this.#toldElsewhere(read.topic, p))
    const added = partitions.filter(p => !told.has(p.partition))
    this.#current.set(read, holding(partitions))
    for (const p of partitions) told.set(p.partition, p.offset)
    this.#told.set(read, told)
    const alias = this.#cluster.alias
    if (moved.length > 0) {
      const again = { ...read, partitions: moved, heldMs: Date.now() - Math.min(...moved.map(p => p.since)) }
      this.#log.warn({ topic: read.topic, cluster: alias, partitions: moved.map(p => p.partition), heldMs: again.heldMs, timeoutMs: read.timeoutMs }, heldMessage(again, this.#cluster))
    }
    if (added.length > 0) {
      const named = added.map(p => `partition ${p.partition} at offset ${p.offset}`).join(', ')
      this.#log.info({ topic: read.topic, cluster: alias, partitions: added.map(p => p.partition) }, `reading ${read.topic} on cluster ${alias} also waits at ${named} ` +
        '(the transaction told above: "... waits for a transaction still open there", or another; /status heldReads lists each partition held)')
    }
  }

  /** Whether a read held now (other than the one asked about, taken out by the caller) was told of hold P of TOPIC. */
  #toldElsewhere (topic: string, p: HeldRead['partitions'][number]): boolean {
    for (const [other] of this.#current) {
      if (other.topic === topic && this.#told.get(other)?.get(p.partition) === p.offset) return true
    }
    return false
  }

  released (read: HeldRead, waitedMs: number, reached: boolean): void {
    this.#current.delete(read)
    this.#told.delete(read)
    const { topic } = read
    const alias = this.#cluster.alias
    const after = `${(waitedMs / 1000).toFixed(1)} s`
    if (reached) this.#log.info({ topic, cluster: alias, waitedMs }, `reading ${topic} on cluster ${alias} no longer waits: the transaction that held it ended (the read took ${after})`)
    else this.#log.info({ topic, cluster: alias, waitedMs }, `reading ${topic} on cluster ${alias} stopped waiting after ${after} without reaching its end (its error says why)`)
  }

  /** The reads held now, longest held first. */
  status (): HeldReadStatus[] {
    return [...this.#current]
      .sort(([, a], [, b]) => a.since - b.since)
      .map(([read, { since, partitions }]) => ({
        topic: read.topic,
        cluster: this.#cluster.alias,
        partitions: partitions.map(p => ({ partition: p.partition, offset: p.offset, end: p.end })),
        since: new Date(since).toISOString(),
        timeoutMs: read.timeoutMs
      }))
  }

  /** A partition of READ held at the same offset by a read held now: the same open transaction, told already. */
  #sameTransaction (read: HeldRead): { partition: number, offset: number } | null {
    for (const [other, { partitions }] of this.#current) {
      if (other.topic !== read.topic) continue
      const shared = read.partitions.find(p => partitions.some(o => o.partition === p.partition && o.offset === p.offset))
      if (shared !== undefined) return { partition: shared.partition, offset: shared.offset }
    }
    return null
  }
}

function holding (partitions: HeldRead['partitions']): { since: number, partitions: HeldRead['partitions'] } {
  return { since: Math.min(...partitions.map(p => p.since)), partitions }
}

function heldMessage (read: HeldRead, cluster: ToolCluster & { readonly alias: string }): string {
  const named = read.partitions.slice(0, NAMED_AT_MOST).map(p => `partition ${p.partition} at offset ${p.offset} of ${p.end}`)
  const more = read.partitions.length > NAMED_AT_MOST ? ` and ${read.partitions.length - NAMED_AT_MOST} more` : ''
  const first = read.partitions[0]!
  const where = `--topic ${read.topic} --partition ${first.partition}`
  return `reading ${read.topic} on cluster ${cluster.alias} waits for a transaction still open there (${named.join(', ')}${more}: the first offset of ` +
    `the open transaction, held ${(read.heldMs / 1000).toFixed(1)} s): what it holds may have been committed by another member behind it, so the ` +
    `read waits for it to commit or abort rather than resume from older records; it gives up after ${Math.round(read.timeoutMs / 1000)} s in all ` +
    'and is tried again. A producer frozen or killed with a transaction open holds it until its transaction timeout: find it (the producer ' +
    `whose CurrentTransactionStartOffset is ${first.offset}: ${toolCommand('kafka-transactions.sh', cluster, `describe-producers ${where}`)}) and, once ` +
    `sure its writer is gone, abort it (${toolCommand('kafka-transactions.sh', cluster, `abort ${where} --start-offset ${first.offset}`, 'ADMIN')}; ` +
    'see "Exactly-once" in docs/operations.md)'
}
