/**
 * Each MM2 job period at 0 and below means in kmirror what it means in MirrorMaker 2 3.9.1 and 4.1.1
 * (src/config/job-intervals.ts has what their sources do).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MIN_CHECKPOINT_INTERVAL_MS } from '../../../src/config/job-intervals.ts'
import type { FlowContext } from '../../../src/metadata/flow-context.ts'
import { heartbeatIntervalMs } from '../../../src/heartbeat/heartbeat-emitter.ts'
import { flowJobs } from '../../../src/runtime/job-registry.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { flowOf, parse, problemFor, problemsOf, twoClusters, warningsFor } from './fixtures.ts'

const runs = { refreshTopics: async () => undefined, emitCheckpoints: async () => undefined, trimOffsetHistory: async () => undefined, syncGroupOffsets: async () => undefined }

/** The periodic jobs flow A->B runs with LINES, by name, with their interval in ms. */
function jobsWith (...lines: string[]): Record<string, number> {
  const config = parse(twoClusters(...lines))
  const context = { flow: flowOf(config, 'A->B'), log: memoryLogger().log } as unknown as FlowContext
  return Object.fromEntries(flowJobs(context, runs).filter(j => j.periodic).map(j => [j.name, j.intervalMs]))
}

/** The jobs whose period of 0 makes MM2's connector fail to start, with the connector and kmirror's job name. */
const FAILING: readonly [job: string, connector: string, name: string | null][] = [
  ['refresh.topics', 'MirrorSourceConnector', 'refresh-topics'],
  ['sync.topic.configs', 'MirrorSourceConnector', 'sync-topic-configs'],
  ['sync.topic.acls', 'MirrorSourceConnector', 'sync-acls'],
  // kmirror lists the groups on every checkpoint pass: no job of its own
  ['refresh.groups', 'MirrorCheckpointConnector', null]
]

describe('MM2 job periods of 0 and below', () => {
  for (const [job, connector, name] of FAILING) {
    it(`${job}.interval.seconds = 0 is refused, as ${connector} fails to start; off with ${job}.enabled = false or a negative value`, () => {
      const key = `${job}.interval.seconds`
      const problem = problemFor(problemsOf(twoClusters(`${key} = 0`)), `A->B.${key}`)
      assert.equal(problem.message, `is 0, which MM2 cannot run (its scheduler refuses a period of 0 and ${connector} fails to start): ` +
        `give a period in seconds above 0, or turn the job off with ${job}.enabled = false (a negative interval also turns it off, as in MM2)`)
      // MM2 reads the interval only while the job is on (MirrorSourceConfig / MirrorCheckpointConfig)
      assert.deepEqual(parse(twoClusters(`${key} = 0`, `${job}.enabled = false`)).warnings, [])
      if (name === null) return
      assert.ok(jobsWith(`${key} = 5`)[name] === 5000)
      assert.equal(jobsWith(`${key} = 0`, `${job}.enabled = false`)[name], undefined)
      assert.equal(jobsWith(`${key} = -1`)[name], undefined)
    })
  }

  it('emit.checkpoints.interval.seconds = 0 checkpoints without a pause in MM2: kmirror every second, with a warning', () => {
    const config = parse(twoClusters('emit.checkpoints.interval.seconds = 0'))
    assert.deepEqual(warningsFor(config, 'A->B.emit.checkpoints.interval.seconds'),
      ['is 0: MM2 checkpoints without any pause; kmirror checkpoints every 1 s (only what changed is written, as in MM2)'])
    assert.equal(MIN_CHECKPOINT_INTERVAL_MS, 1000)
    assert.equal(jobsWith('emit.checkpoints.interval.seconds = 0')['emit-checkpoints'], 1000)
    assert.equal(jobsWith('emit.checkpoints.interval.seconds = 7')['emit-checkpoints'], 7000)
    // negative: MirrorCheckpointConnector starts no task
    assert.equal(jobsWith('emit.checkpoints.interval.seconds = -1')['emit-checkpoints'], undefined)
  })

  it('emit.checkpoints.enabled = false turns checkpoints off whatever the interval, without a warning', () => {
    const config = parse(twoClusters('emit.checkpoints.enabled = false', 'emit.checkpoints.interval.seconds = 0'))
    assert.deepEqual(config.warnings, [])
    assert.equal(jobsWith('emit.checkpoints.enabled = false', 'emit.checkpoints.interval.seconds = 0')['emit-checkpoints'], undefined)
    assert.equal(jobsWith('emit.checkpoints.enabled = false')['emit-checkpoints'], undefined)
  })

  it('sync.group.offsets.interval.seconds = 0 leaves MM2\'s task without the sync (an ERROR in its log): kmirror too, with a warning', () => {
    const lines = ['sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 0']
    const config = parse(twoClusters(...lines))
    assert.deepEqual(warningsFor(config, 'A->B.sync.group.offsets.interval.seconds'), [
      'is 0: MM2\'s checkpoint task cannot schedule a period of 0 (it logs an ERROR) and never syncs group offsets, so kmirror does not either; ' +
      'give a period in seconds above 0 to sync them, or set sync.group.offsets.enabled = false to say so'
    ])
    const jobs = jobsWith(...lines)
    assert.equal(jobs['sync-group-offsets'], undefined)
    assert.equal(jobs['emit-checkpoints'], 60_000, 'checkpoints go on, as in MM2')
    assert.equal(jobsWith('sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = -1')['sync-group-offsets'], undefined)
    assert.equal(jobsWith('sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 3')['sync-group-offsets'], 3000)
    // off (the default): no warning, whatever the interval
    assert.deepEqual(parse(twoClusters('sync.group.offsets.interval.seconds = 0')).warnings, [])
  })

  it('group offsets synced with checkpoints off: MM2 starts no checkpoint task and syncs nothing; kmirror syncs, with a warning', () => {
    for (const off of ['emit.checkpoints.enabled = false', 'emit.checkpoints.interval.seconds = -1']) {
      const lines = ['sync.group.offsets.enabled = true', off]
      assert.deepEqual(warningsFor(parse(twoClusters(...lines)), 'A->B.sync.group.offsets.enabled'), [
        'is true while checkpoints are off (emit.checkpoints.enabled = false or a negative emit.checkpoints.interval.seconds): ' +
        'MM2 then starts no checkpoint task and syncs no group offsets; kmirror syncs them all the same. Turn checkpoints on to sync with MM2 too'
      ], off)
      assert.equal(jobsWith(...lines)['sync-group-offsets'], 60_000, off)
    }
    assert.deepEqual(parse(twoClusters('sync.group.offsets.enabled = true')).warnings, [])
  })

  it('offset syncs off with checkpoints on: MM2\'s checkpoint connector cannot run; kmirror checkpoints, with a warning', () => {
    assert.deepEqual(warningsFor(parse(twoClusters('emit.offset-syncs.enabled = false')), 'A->B.emit.offset-syncs.enabled'), [
      'is false while checkpoints are on: MM2\'s checkpoint connector cannot run without offset syncs, so MM2 writes no checkpoints ' +
      'and syncs no group offsets; kmirror checkpoints from its own offset history all the same. Set emit.checkpoints.enabled = false to match MM2'
    ])
    assert.equal(jobsWith('emit.offset-syncs.enabled = false')['emit-checkpoints'], 60_000)
    assert.deepEqual(parse(twoClusters('emit.offset-syncs.enabled = false', 'emit.checkpoints.enabled = false')).warnings, [])
  })

  it('emit.heartbeats.interval.seconds = 0 emits without a pause in MM2: kmirror every 100 ms, with a warning; negative or disabled is off', () => {
    const heartbeats = (...lines: string[]): number | null => heartbeatIntervalMs(flowOf(parse(twoClusters(...lines)), 'A->B'))
    assert.equal(heartbeats('emit.heartbeats.interval.seconds = 0'), 100)
    assert.deepEqual(warningsFor(parse(twoClusters('emit.heartbeats.interval.seconds = 0')), 'A->B.emit.heartbeats.interval.seconds'),
      ['is 0: MM2 emits heartbeats without any pause; kmirror emits one every 100 ms'])
    assert.deepEqual(parse(twoClusters('emit.heartbeats.enabled = false', 'emit.heartbeats.interval.seconds = 0')).warnings, [])
    assert.equal(heartbeats('emit.heartbeats.interval.seconds = 2'), 2000)
    assert.equal(heartbeats('emit.heartbeats.interval.seconds = -1'), null)
    assert.equal(heartbeats('emit.heartbeats.enabled = false', 'emit.heartbeats.interval.seconds = 0'), null)
  })
})
