/** Fakes of FlowReplicator's `ProgressSink` and `OffsetSyncSink` ports that record what they were given. */
import type { OffsetSyncSink, ProgressSink } from '../../src/replication/flow-replicator.ts'
import type { WriteTarget } from '../../src/replication/replicator-ports.ts'
import type { OffsetSyncEntry } from '../../src/replication/offset-sync-tracker.ts'
import { settle } from './deferred.ts'

export interface CommittedPosition {
  readonly topic: string
  readonly partition: number
  readonly lastOffset: number
}

export class RecordingProgress implements ProgressSink {
  readonly commits: Map<string, CommittedPosition>[] = []
  #check: ((positions: ReadonlyMap<string, CommittedPosition>) => void) | null = null

  /** Runs on every commit before it is recorded: an invariant check may throw. */
  onCommit (check: (positions: ReadonlyMap<string, CommittedPosition>) => void): void {
    this.#check = check
  }

  async commit (positions: ReadonlyMap<string, CommittedPosition>): Promise<number> {
    this.#check?.(positions)
    this.commits.push(new Map([...positions].map(([key, p]) => [key, { topic: p.topic, partition: p.partition, lastOffset: p.lastOffset }])))
    return positions.size
  }

  /** The last committed position of each partition, keyed `topic-partition`. */
  latest (): Record<string, number> {
    const out: Record<string, number> = {}
    for (const p of this.commits.at(-1)?.values() ?? []) out[`${p.topic}-${p.partition}`] = p.lastOffset
    return out
  }
}

export class RecordingSyncs implements OffsetSyncSink {
  readonly sent: OffsetSyncEntry[] = []
  attempts = 0
  /** Each write completes only after an event-loop turn, while the fake data path runs on promise callbacks alone. */
  slow = false
  readonly #failures: unknown[] = []
  readonly writesTo?: WriteTarget

  constructor (writesTo?: WriteTarget) {
    if (writesTo !== undefined) this.writesTo = writesTo
  }

  /** Partitions the data path said were copied again into a re-created topic (`restarted`). */
  readonly restarts: string[] = []

  restarted (key: string): void {
    this.restarts.push(key)
  }

  failNextSend (err: unknown): void {
    this.#failures.push(err)
  }

  async send (entries: readonly OffsetSyncEntry[]): Promise<void> {
    this.attempts++
    if (this.slow) await settle()
    const failure = this.#failures.shift()
    if (failure !== undefined) throw failure
    this.sent.push(...entries)
  }

  of (topic: string, partition: number): OffsetSyncEntry[] {
    return this.sent.filter(s => s.topic === topic && s.partition === partition)
  }
}
