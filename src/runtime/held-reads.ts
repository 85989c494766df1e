/**
 * What the operator is told while a start or an assignment waits on a transaction open on one of the flow's
 * internal topics on the target (topic-reader.ts `HeldReadListener`). The progress and history reads that resume
 * the data path wait for such a transaction to end (what it holds may be progress or history another member
 * committed behind it: resuming without it would copy records twice or translate from an older run), up to the
 * transaction timeout and more. Silent, that wait looks like a hang; told, it names the topic, the partitions,
 * how long it may last and the tool lines that find and end the transaction.
 */
import type { HeldRead, HeldReadListener } from '../kafka/topic-reader.ts'
import { toolCommand, type ToolCluster } from '../kafka/tool-command.ts'
import type { Logger } from '../logger.ts'

/** How many held partitions a warning names (it counts the rest). */
const NAMED_AT_MOST = 5

export function heldReadLogger (log: Logger, cluster: ToolCluster & { readonly alias: string }): HeldReadListener {
  const alias = cluster.alias
  return {
    held: (read: HeldRead) => {
      const named = read.partitions.slice(0, NAMED_AT_MOST).map(p => `partition ${p.partition} at offset ${p.offset} of ${p.end}`)
      const more = read.partitions.length > NAMED_AT_MOST ? ` and ${read.partitions.length - NAMED_AT_MOST} more` : ''
      const first = read.partitions[0]!
      const where = `--topic ${read.topic} --partition ${first.partition}`
      log.warn({ topic: read.topic, cluster: alias, partitions: read.partitions.map(p => p.partition), heldMs: read.heldMs, timeoutMs: read.timeoutMs },
        `reading ${read.topic} on cluster ${alias} waits for a transaction still open there (${named.join(', ')}${more}: the first offset of ` +
        `the open transaction, held ${(read.heldMs / 1000).toFixed(1)} s): what it holds may have been committed by another member behind it, so the ` +
        `read waits for it to commit or abort rather than resume from older records; it gives up after ${Math.round(read.timeoutMs / 1000)} s in all ` +
        'and is tried again. A producer frozen or killed with a transaction open holds it until its transaction timeout: find it (the producer ' +
        `whose CurrentTransactionStartOffset is ${first.offset}: ${toolCommand('kafka-transactions.sh', cluster, `describe-producers ${where}`)}) and, once ` +
        `sure its writer is gone, abort it (${toolCommand('kafka-transactions.sh', cluster, `abort ${where} --start-offset ${first.offset}`, 'ADMIN')}; ` +
        'see "Exactly-once" in docs/operations.md)')
    },
    released: (topic: string, waitedMs: number, reached: boolean) => {
      const after = `${(waitedMs / 1000).toFixed(1)} s`
      if (reached) log.info({ topic, cluster: alias, waitedMs }, `reading ${topic} on cluster ${alias} no longer waits: the transaction that held it ended (the read took ${after})`)
      else log.info({ topic, cluster: alias, waitedMs }, `reading ${topic} on cluster ${alias} stopped waiting after ${after} without reaching its end (its error says why)`)
    }
  }
}
