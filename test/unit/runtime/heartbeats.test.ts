/**
 * A pair's heartbeat job as one unit of a group's work (Heartbeats.pairJob) over in-memory clients: stopped with a
 * reason (its membership ended, or the group revoked it), the run under way writes no heartbeat after it, and that
 * run counts as a run, not as a failure (kmirror_job_failures_total).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { NewTopic } from '../../../src/kafka/admin-client.ts'
import type { OffsetSegment, PartitionBatch } from '../../../src/kafka/record-writer.ts'
import { Heartbeats, type TargetClients } from '../../../src/runtime/heartbeats.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { deferred, type Deferred } from '../../fakes/deferred.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'
import { flowOf, parse, twoClusters } from '../config/fixtures.ts'

/** The target's heartbeats topic and records in memory; a creation can be held open or made to fail. */
class FakeTargetClients implements TargetClients {
  readonly creations: string[] = []
  readonly written: PartitionBatch[] = []
  /** Each creation waits for the next of these, when there is one. */
  readonly holds: Deferred<void>[] = []
  createErrors: unknown[] = []
  closed = false
  readonly admin = {
    createTopic: async (topic: NewTopic): Promise<'created'> => {
      this.creations.push(topic.name)
      const error = this.createErrors.shift()
      if (error !== undefined) throw error
      await this.holds.shift()?.promise
      return 'created'
    }
  }

  readonly writer = {
    write: async (batches: readonly PartitionBatch[]): Promise<OffsetSegment[][]> => {
      this.written.push(...batches)
      return batches.map(() => [{ start: 0, baseOffset: 0 }])
    }
  }

  async close (): Promise<void> {
    this.closed = true
  }
}

const LOST = 'the group membership that owned it ended'

function setup (...lines: string[]) {
  const pair = flowOf(parse(twoClusters(...lines)), 'A->B')
  const target = new FakeTargetClients()
  const metrics = new CountingMetrics()
  const logs = memoryLogger()
  const heartbeats = new Heartbeats([pair], logs.log, metrics, () => target)
  const job = heartbeats.pairJob('A->B')!
  const count = (metric: string): number => metrics.counts.get(`${metric}{"flow":"A->B","job_name":"heartbeats"}`) ?? 0
  return { target, logs, heartbeats, job, count }
}

describe('Heartbeats.pairJob', () => {
  it('Given a heartbeat run under way (creating its topic), when the job is stopped as its membership ended, then no heartbeat is written, and the run is told at info as stopped and counted as a run, not a failure', async () => {
    const { target, logs, heartbeats, job, count } = setup()
    const creation = deferred()
    target.holds.push(creation)
    job.start()
    await waitFor(() => target.creations.length === 1, { timeoutMs: 2000, intervalMs: 5, message: 'the first run creating the heartbeats topic' })
    const stopped = job.stop(LOST)
    creation.resolve()
    await stopped
    assert.deepEqual(target.written, [])
    assert.deepEqual([count('jobRuns'), count('jobFailures')], [1, 0])
    assert.deepEqual(logs.at(LogLevels.info).filter(l => l.msg === 'job run stopped before its end: it writes nothing more').map(l => String(l['reason'])), [`job heartbeats stopped: ${LOST}`])
    assert.deepEqual(logs.at(LogLevels.warn), [])
    await heartbeats.stop()
  })

  it('Given a failed heartbeat run, when the next run is aborted, then only the failed run counts in kmirror_job_failures_total', async () => {
    // Given a target that refuses the first creation (retried 100 ms later) and holds the second open
    const { target, heartbeats, job, count } = setup('emit.heartbeats.interval.seconds = 0')
    target.createErrors.push(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B unreachable', { retriable: true }))
    const creation = deferred()
    target.holds.push(creation)
    job.start()
    await waitFor(() => target.creations.length === 2, { timeoutMs: 2000, intervalMs: 5, message: 'the second run creating the heartbeats topic' })
    // When the job is stopped as revoked while that run is under way
    const stopped = job.stop('revoked: the group handed it to another instance, which runs it from now on')
    creation.resolve()
    await stopped
    // Then no heartbeat is written, and of two runs one failed
    assert.deepEqual(target.written, [])
    assert.deepEqual([count('jobRuns'), count('jobFailures')], [2, 1])
    await heartbeats.stop()
  })

  it('Given a heartbeat run under way, when the job is stopped without a reason (the process stops), then that run finishes its heartbeat', async () => {
    const { target, heartbeats, job } = setup()
    const creation = deferred()
    target.holds.push(creation)
    job.start()
    await waitFor(() => target.creations.length === 1, { timeoutMs: 2000, intervalMs: 5, message: 'the first run creating the heartbeats topic' })
    const stopped = job.stop()
    creation.resolve()
    await stopped
    assert.equal(target.written.length, 1)
    await heartbeats.stop()
    assert.equal(target.closed, true)
  })
})
