/**
 * What the operator sees of the source partitions open transactions hold (source-waits.ts), from the first round
 * that finds them, long before one is reported failing: `/status` per partition (`heldAt`, `heldSince`) and two
 * gauges per flow, so an operator can alert on holds sooner than health.transaction.hang.threshold.ms.
 */
import type { Metrics } from '../metrics/metrics.ts'
import type { PartitionStatus } from './replicator-ports.ts'

/** STATUS with the hold of its partition, if any. */
export function withHold (status: PartitionStatus, hold: { readonly at: number, readonly since: number } | undefined): PartitionStatus {
  return hold === undefined ? status : { ...status, heldAt: hold.at, heldSince: new Date(hold.since).toISOString() }
}

/** The flow's gauges: partitions held now, and how long the longest-held one has been (0 when none). */
export function setHoldGauges (metrics: Metrics, flow: string, holding: { readonly count: number, readonly oldestSince: number | null }, now = Date.now()): void {
  metrics.set('sourcePartitionsHeld', { flow }, holding.count)
  metrics.set('sourceHoldSeconds', { flow }, holding.oldestSince === null ? 0 : Math.max(0, now - holding.oldestSince) / 1000)
}
