/**
 * Partitions the target has taken no records of for longer than the flow's `health.stall.threshold.ms` are
 * reported as failing, once per wait (target-wait.ts tracks the waits, partition-failures.ts reports them): a
 * warning naming the remote partition, why the target does not take it and the fix; `/status`, `/healthz` and
 * `kmirror_failing_partitions` follow. Nothing is skipped: the partition is copied as soon as a probe finds it
 * writable. So are the partitions the source has given nothing of for that long though it refused nothing
 * (source-waits.ts: no leader, a leader out of reach), and, past health.transaction.hang.threshold.ms, those a
 * transaction open on the source holds.
 */
import type { Logger } from '../logger.ts'
import type { PartitionFailures } from './partition-failures.ts'
import type { FlowReplicatorDeps, TargetWriter } from './replicator-ports.ts'
import type { SourceWaits } from './source-waits.ts'
import type { TargetWait } from './target-wait.ts'

/** How long a partition waits for the target before it is reported, without a flow's health.stall.threshold.ms (its default). */
export const DEFAULT_WAIT_REPORT_MS = 120_000
/** How long an open source transaction holds a partition before it is reported, without a flow's health.transaction.hang.threshold.ms (its default). */
export const DEFAULT_HOLD_REPORT_MS = 900_000
/** Partitions reported with a warning line each, per round; the others of the round share one line. */
export const WAIT_WARNINGS_SHOWN = 20
/** Why a partition waits, when the writer cannot say (no probe has answered for it). */
const UNKNOWN_WAIT = { error: 'LEADER_NOT_AVAILABLE', detail: 'its leader does not take records for it (no leader, or one still loading it)' }

export interface WaitReportDeps {
  readonly flow: FlowReplicatorDeps['flow']
  readonly waiting: TargetWait
  readonly failing: PartitionFailures
  readonly writer: TargetWriter
  readonly log: Logger
  readonly unread: SourceWaits
}

/** Reports the waits, for the target or the source, that crossed the threshold since the last call (each wait once). */
export function reportLongWaits (deps: WaitReportDeps, now = Date.now()): void {
  const thresholdMs = deps.flow.healthStallThresholdMs ?? DEFAULT_WAIT_REPORT_MS
  reportTargetWaits(deps, thresholdMs)
  reportSourceWaits(deps, thresholdMs, now)
}

function reportTargetWaits (deps: WaitReportDeps, thresholdMs: number): void {
  const { flow, waiting, failing, writer, log } = deps
  const waits = waiting.waits(thresholdMs)
  waits.forEach(({ state, since }, i) => {
    const reason = writer.waitReason?.(state.remoteTopic, state.partition) ?? UNKNOWN_WAIT
    failing.waiting(state.key, state, { ...reason, sinceMs: since, thresholdMs, nextTryAt: state.retryAt }, i >= WAIT_WARNINGS_SHOWN)
  })
  // A broker leading a thousand partitions going down: a few lines each, then one for the rest.
  if (waits.length > WAIT_WARNINGS_SHOWN) {
    const more = waits.length - WAIT_WARNINGS_SHOWN
    log.warn({ count: more, thresholdMs }, `and ${more} more partitions of flow ${flow.name} the target has taken no records of ` +
      `for ${Math.round(thresholdMs / 1000)} s (health.stall.threshold.ms); /status lists each with its failure and remedy`)
  }
}

function reportSourceWaits (deps: WaitReportDeps, thresholdMs: number, now: number): void {
  const { flow, unread, failing } = deps
  const waits = unread.due(thresholdMs, now)
  waits.forEach(({ state, since, reason }, i) => {
    failing.unreadable(state.key, state, { ...reason, sinceMs: since, thresholdMs }, i >= WAIT_WARNINGS_SHOWN, now)
  })
  summarise(deps, waits.length, `the source has given nothing of for ${Math.round(thresholdMs / 1000)} s (health.stall.threshold.ms)`)
  const holdMs = holdThresholdMs(flow)
  const holds = unread.holdsDue(holdMs, now)
  holds.forEach(({ state, since, at, highWatermark }, i) => {
    failing.held(state.key, state, { at, highWatermark, sinceMs: since, thresholdMs: holdMs }, i >= WAIT_WARNINGS_SHOWN, now)
  })
  summarise(deps, holds.length, `a transaction open on the source has held for ${Math.round(holdMs / 1000)} s (health.transaction.hang.threshold.ms)`)
}

/** How long an open source transaction holds a partition before it is reported (the flow's health.transaction.hang.threshold.ms). */
export function holdThresholdMs (flow: WaitReportDeps['flow']): number {
  return flow.transactionHangThresholdMs ?? DEFAULT_HOLD_REPORT_MS
}

/** Past WAIT_WARNINGS_SHOWN partitions of one kind, one line for the rest. */
function summarise ({ flow, log }: WaitReportDeps, count: number, what: string): void {
  if (count <= WAIT_WARNINGS_SHOWN) return
  const more = count - WAIT_WARNINGS_SHOWN
  log.warn({ count: more }, `and ${more} more partitions of flow ${flow.name} ${what}; /status lists each with its failure and remedy`)
}
