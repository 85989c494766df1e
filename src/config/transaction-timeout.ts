/**
 * Exactly-once mode: a transaction timeout (`<target>.producer.transaction.timeout.ms`) that the flow's own waits
 * would eat up. A round that wrote anything is aborted once it has run for 90 % of the timeout (timed from its
 * start, its fetch included: replication/transaction-rounds.ts), so one produce request waiting out
 * `request.timeout.ms` must fit well inside it; and the target's coordinator looks for timed-out transactions only
 * every 10 s (`transaction.abort.timed.out.transaction.cleanup.interval.ms`), so a shorter timeout does not end a dead
 * instance's transaction any sooner.
 */
import { clientInt } from './client-settings.ts'
import type { FlowConfig } from './types.ts'
import type { ConfigWarning } from './warnings.ts'

/** The brokers' default interval between two looks for timed-out transactions. */
const COORDINATOR_CHECK_MS = 10_000
/** The brokers' default transaction.max.timeout.ms: InitProducerId with a longer timeout is refused (INVALID_TRANSACTION_TIMEOUT). */
const BROKER_MAX_DEFAULT_MS = 900_000

/** The flow's transaction timeout: `<target>.producer.transaction.timeout.ms` (60000 by default). */
export function transactionTimeoutMs (flow: FlowConfig): number {
  return clientInt(flow.target.producer, 'transaction.timeout.ms')
}

/** The reader's minute: an internal topic read to its end that takes longer fails (retried). */
const INTERNAL_READ_TIMEOUT_MS = 60_000

/**
 * How long a read of an internal topic to its high watermark may wait for transactions open there: in exactly-once
 * mode past the transaction timeout and the coordinator's look for timed-out ones plus 10 s (a dead member's
 * transaction the group's leader could not fence ends by then), else the reader's minute.
 */
export function transactionWaitMs (flow: FlowConfig): number {
  return Math.max(INTERNAL_READ_TIMEOUT_MS, flow.exactlyOnce ? transactionTimeoutMs(flow) + COORDINATOR_CHECK_MS + 10_000 : 0)
}

export function transactionTimeoutWarnings (flow: FlowConfig): ConfigWarning[] {
  if (!flow.exactlyOnce) return []
  const timeoutMs = transactionTimeoutMs(flow)
  const requestMs = clientInt(flow.target.producer, 'request.timeout.ms')
  const key = `${flow.target.alias}.producer.transaction.timeout.ms`
  if (timeoutMs * 0.9 <= requestMs) {
    return [{
      key,
      message: `is ${timeoutMs} for flow ${flow.name}, not above request.timeout.ms (${requestMs}) of the target's producer: one slow produce request ` +
        `would outlast 90 % of the transaction and abort the round, which is then written again; set it well above (defaults 60000 and 30000)`
    }]
  }
  if (timeoutMs > BROKER_MAX_DEFAULT_MS) {
    return [{
      key,
      message: `is ${timeoutMs} for flow ${flow.name}, above the brokers' default transaction.max.timeout.ms (900000): unless the target ` +
        `${flow.target.alias}'s brokers raised it, the flow stops at start with INVALID_TRANSACTION_TIMEOUT (exit 3); and a transaction left open ` +
        'by a dead instance that the next one cannot fence holds read_committed readers back that long'
    }]
  }
  if (timeoutMs < COORDINATOR_CHECK_MS) {
    return [{
      key,
      message: `is ${timeoutMs} for flow ${flow.name}: below 10000 it leaves slow rounds less room without ending a dead instance's transaction any ` +
        'sooner (the coordinator looks for timed-out transactions every 10 s by default)'
    }]
  }
  return []
}
