/**
 * What the operator is told while a start or an assignment waits on a transaction open on one of the flow's
 * internal topics on the target (topic-reader.ts `HeldReadListener`). The progress and history reads that resume
 * the data path wait for such a transaction to end (what it holds may be progress another member committed after
 * it: resuming without it would copy records twice), up to the transaction timeout and more. Silent, that wait
 * looks like a hang; told, it names the topic, the partitions, how long it may last and how to end it sooner.
 */
import type { HeldRead, HeldReadListener } from '../kafka/topic-reader.ts'
import type { Logger } from '../logger.ts'

/** How many held partitions a warning names (it counts the rest). */
const NAMED_AT_MOST = 5

export function heldReadLogger (log: Logger, cluster: string): HeldReadListener {
  return {
    held: (read: HeldRead) => {
      const named = read.partitions.slice(0, NAMED_AT_MOST).map(p => `partition ${p.partition} at offset ${p.offset} of ${p.end}`)
      const more = read.partitions.length > NAMED_AT_MOST ? ` and ${read.partitions.length - NAMED_AT_MOST} more` : ''
      log.warn({ topic: read.topic, cluster, partitions: read.partitions.map(p => p.partition), waitedMs: read.waitedMs, timeoutMs: read.timeoutMs },
        `reading ${read.topic} on cluster ${cluster} waits for a transaction still open there (${named.join(', ')}${more}: held at the last stable ` +
        `offset): what it holds may be progress another member committed, so the read waits for it to commit or abort, ${Math.round(read.timeoutMs / 1000)} s at most, ` +
        'rather than resume from older positions and copy records twice. A producer frozen or killed with a transaction open holds it until its ' +
        `transaction timeout: find it with \`kafka-transactions.sh --bootstrap-server <${cluster}> describe-producers --topic ${read.topic} --partition ${read.partitions[0]?.partition ?? 0}\` ` +
        'and, if its writer is gone, end it with `kafka-transactions.sh abort` (see "Exactly-once" in docs/operations.md)')
    },
    released: (topic: string, waitedMs: number) => {
      log.info({ topic, cluster, waitedMs }, `reading ${topic} on cluster ${cluster} no longer waits: the transaction that held it ended after ${(waitedMs / 1000).toFixed(1)} s`)
    }
  }
}
