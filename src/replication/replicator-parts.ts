/**
 * The parts of one flow's data path (flow-replicator.ts), built and wired together once: what settles partitions,
 * writes rounds, waits on the source or the target, and restarts a partition whose remote or source topic was
 * created again. The replicator keeps the partition set, the offset-sync tracker and the loop; the parts reach
 * them only through `ReplicatorCore`.
 *
 * Invariant: a restarted partition (remote or source topic created again) starts its offset syncs afresh, its
 * write state is forgotten, and in exactly-once mode the restart is applied again after a rewind of the round.
 */
import type { Metrics } from '../metrics/metrics.ts'
import { ExactlyOnceRound } from './exactly-once-round.ts'
import type { OffsetSyncTracker } from './offset-sync-tracker.ts'
import { OwnershipGrants } from './ownership-grants.ts'
import { PartitionFailures } from './partition-failures.ts'
import type { PartitionSet, PartitionState } from './partition-set.ts'
import { parsePartitionKey } from '../topic-partition.ts'
import { PendingStarts } from './pending-starts.ts'
import { ProgressFlusher, type StoredPositions } from './progress-flusher.ts'
import { createProvenanceMarker } from './provenance.ts'
import { RecreatedRemotes } from './recreated-remotes.ts'
import type { FlowReplicatorDeps } from './replicator-ports.ts'
import { RoundOutcome } from './round-outcome.ts'
import { DEFAULT_BATCHING, RoundWriter } from './round-writer.ts'
import { SourceRecreated } from './source-recreated.ts'
import { SourceWaits } from './source-waits.ts'
import { StepFailures } from './step-failures.ts'
import { TargetWait } from './target-wait.ts'
import { holdThresholdMs } from './wait-reports.ts'

/** What the parts need of the replicator. */
export interface ReplicatorCore {
  readonly partitions: PartitionSet
  readonly tracker: OffsetSyncTracker
  readonly metrics: Metrics
  /** The state of a partition fetched this round. */
  readonly state: (f: { topic: string, partition: number }) => PartitionState
  readonly positions: () => StoredPositions
  readonly afterAcks: (copied: boolean) => Promise<void>
}

export interface ReplicatorParts {
  readonly steps: StepFailures
  readonly failing: PartitionFailures
  readonly unread: SourceWaits
  readonly pendingStarts: PendingStarts
  readonly flusher: ProgressFlusher
  /** When ownership last changed; its loss signal ends the stores begun under a lost membership (progress-flusher.ts). */
  readonly grants: OwnershipGrants
  /** Exactly-once mode: how a round runs as a transaction; null in at-least-once mode. */
  readonly eos: ExactlyOnceRound | null
  readonly writer: RoundWriter
  readonly recreated: RecreatedRemotes
  readonly sourceRecreated: SourceRecreated
  readonly waiting: TargetWait
  readonly outcome: RoundOutcome
}

export function buildReplicatorParts (deps: FlowReplicatorDeps, core: ReplicatorCore): ReplicatorParts {
  const { flow, progress, syncs, log } = deps
  const { partitions, tracker, metrics, state } = core
  const clusters = deps.clusters ?? { source: { alias: 'source' }, target: { alias: 'target' } }
  const aliases = { source: clusters.source.alias, target: clusters.target.alias }
  const failing = new PartitionFailures(flow.name, clusters, log, metrics, deps.failureBackoff)
  const unread = new SourceWaits(deps.isolation, holdThresholdMs(flow))
  const pendingStarts = new PendingStarts({
    failing,
    sourceAlias: aliases.source,
    taken: key => partitions.taken(key),
    // One try each: the pending partitions have their own back-off.
    resolve: (refs, from) => partitions.resolve(refs, from, 1),
    enqueue: (states, admit) => partitions.enqueue({ kind: 'add', states, admit, done: () => undefined }),
    log
  })
  const grants = new OwnershipGrants()
  const flusher = new ProgressFlusher({ flow, progress, syncs, log, tracker, flushWhenCaughtUp: deps.flushWhenCaughtUp === true, untilLost: () => grants.untilLost })
  const eos = deps.exactlyOnce === undefined
    ? null
    : new ExactlyOnceRound({ eos: deps.exactlyOnce, flow, progress, syncs, log, tracker, partitions, positions: core.positions, fence: deps.fence, target: aliases.target })
  const writer = new RoundWriter({
    flowName: flow.name,
    writer: deps.writer,
    log,
    metrics,
    tracker,
    failing,
    provenance: createProvenanceMarker(flow),
    batching: { ...DEFAULT_BATCHING, ...deps.batching },
    fence: deps.fence,
    state,
    afterAcks: core.afterAcks
  })
  const restart = (key: string, from: number): void => {
    tracker.reset(key)
    syncs?.restarted?.(key)
    writer.forget(key)
    if (eos === null) {
      const { topic, partition } = parsePartitionKey(key)
      flusher.restarted(key, topic, partition, from)
    } else eos.restarted(key, from)
  }
  const recreated = new RecreatedRemotes({
    flow: flow.name,
    aliases,
    fetcher: deps.fetcher,
    ...(deps.writer.recreatedPartitions === undefined ? {} : { check: deps.writer.recreatedPartitions.bind(deps.writer) }),
    partitions,
    log,
    metrics,
    restart
  })
  const sourceRecreated = new SourceRecreated({
    flow: flow.name,
    aliases,
    log,
    metrics,
    state,
    restart: (s, from) => {
      unread.forget(s)
      restart(s.key, from)
    }
  })
  const waiting = new TargetWait(deps.writer.probeReady?.bind(deps.writer))
  const outcome = new RoundOutcome({ state, failing, writer, recreated, waiting, unread })
  return { steps: new StepFailures(log), failing, unread, pendingStarts, flusher, grants, eos, writer, recreated, sourceRecreated, waiting, outcome }
}
