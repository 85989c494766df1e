/**
 * Partitions whose last write the target answered "not now" (a new remote topic not loaded on its leader yet, a
 * leader moving: round-outcome.ts sets `awaitingTarget`): before a round fetches them from the source again, one
 * probe of the target (batch-writer.ts `notReady`: Metadata for their topics, ListOffsets to their leaders) says
 * which it can take now. Only those are fetched; the others wait another INCOMPLETE_COOL_DOWN_MS.
 *
 * Why: while a target broker makes thousands of new partitions writable, fetching their records again every round
 * (source broker and kmirror CPU, records decoded and dropped) and asking the target about them costs the CPU the
 * broker needs to load them, on a machine where they share it.
 *
 * Invariants:
 * - Only a "not now" answer of the target holds a partition back; a probe that fails, or a partition the target
 *   refuses to describe, lets it be fetched and written as before, so a refusal is reported by the write, never
 *   hidden by the wait.
 * - Nothing is probed in a round without such partitions (the usual case: one check of a flag per partition).
 */
import type { Logger } from '../logger.ts'
import type { PartitionState } from './partition-set.ts'
import { INCOMPLETE_COOL_DOWN_MS } from './round-outcome.ts'

/** The target's "not now" probe over remote partitions (batch-writer.ts `notReady`). */
export type NotReadyProbe = <T extends { topic: string, partition: number }>(partitions: readonly T[]) => Promise<T[]>

/** A target writer, with or without the probe (writers without one: every partition is fetched as before). */
export interface ProbingWriter {
  readonly notReady?: NotReadyProbe | undefined
}

interface Waiting {
  readonly topic: string
  readonly partition: number
  readonly state: PartitionState
}

/** The partitions of `active` to fetch this round: all but those still waiting for the target (see the invariants). */
export async function readyToFetch (active: PartitionState[], writer: ProbingWriter, now: number, log: Logger): Promise<PartitionState[]> {
  if (writer.notReady === undefined || !active.some(p => p.awaitingTarget)) return active
  const waiting: Waiting[] = []
  for (const state of active) if (state.awaitingTarget) waiting.push({ topic: state.remoteTopic, partition: state.partition, state })
  const probeStart = Date.now()
  const notReady = new Set((await writer.notReady(waiting)).map(w => w.state))
  log.debug({ waiting: waiting.length, ready: waiting.length - notReady.size, probeMs: Date.now() - probeStart }, 'probed the remote partitions the target could not take yet; fetching the ready ones')
  for (const { state } of waiting) {
    if (notReady.has(state)) state.retryAt = now + INCOMPLETE_COOL_DOWN_MS
    else state.awaitingTarget = false
  }
  return notReady.size === 0 ? active : active.filter(p => !notReady.has(p))
}
