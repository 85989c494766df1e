import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { FlowContext } from '../../../src/metadata/flow-context.ts'
import { flowJobs, JOB_NAMES, JobNames } from '../../../src/runtime/job-registry.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

function flowWith (...lines: string[]): FlowConfig {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n'), 'mm2.properties')
  return config.flows.find(f => f.name === 'A->B')!
}

const runs = { refreshTopics: async () => undefined, emitCheckpoints: async () => undefined, trimOffsetHistory: async () => undefined, syncGroupOffsets: async () => undefined }

function jobsOf (...lines: string[]): { name: string, intervalMs: number, firstDelayMs: number, periodic: boolean }[] {
  const context = { flow: flowWith(...lines), log: memoryLogger().log } as unknown as FlowContext
  return flowJobs(context, runs).map(j => ({ name: j.name, intervalMs: j.intervalMs, firstDelayMs: j.firstDelayMs, periodic: j.periodic }))
}

describe('job registry', () => {
  it('lists every job of a flow with its interval, in scheduling order, each name from the one list', () => {
    const jobs = jobsOf('sync.group.offsets.enabled = true', 'refresh.topics.interval.seconds = 600', 'sync.topic.configs.interval.seconds = 700',
      'sync.topic.acls.interval.seconds = 800', 'emit.checkpoints.interval.seconds = 60', 'sync.group.offsets.interval.seconds = 70')
    assert.deepEqual(jobs, [
      { name: 'refresh-topics', intervalMs: 600_000, firstDelayMs: 600_000, periodic: true },
      { name: 'sync-topic-configs', intervalMs: 700_000, firstDelayMs: 0, periodic: true },
      { name: 'sync-acls', intervalMs: 800_000, firstDelayMs: 0, periodic: true },
      { name: 'emit-checkpoints', intervalMs: 60_000, firstDelayMs: 60_000, periodic: true },
      { name: 'trim-offset-history', intervalMs: 300_000, firstDelayMs: 300_000, periodic: true },
      { name: 'sync-group-offsets', intervalMs: 70_000, firstDelayMs: 70_000, periodic: true }
    ])
    for (const job of jobs) assert.ok(JOB_NAMES.includes(job.name as never), job.name)
    assert.deepEqual(JOB_NAMES.filter(n => !jobs.some(j => j.name === n)), [JobNames.EMIT_HEARTBEATS])
  })

  it('leaves out disabled jobs, and keeps the topic refresh as a one-off when its periodic runs are off', () => {
    const jobs = jobsOf('refresh.topics.enabled = false', 'sync.topic.configs.enabled = false', 'sync.topic.acls.enabled = false', 'emit.checkpoints.enabled = false')
    assert.deepEqual(jobs.map(j => [j.name, j.periodic]), [['refresh-topics', false], ['trim-offset-history', true]])
  })

  it('gives the topic refresh, and only it, the flow\'s hooks for its coming to this instance and its leaving', () => {
    const told: string[] = []
    const context = { flow: flowWith(), log: memoryLogger().log } as unknown as FlowContext
    const jobs = flowJobs(context, { ...runs, refreshTopicsAssigned: () => { told.push('assigned') }, refreshTopicsStopped: () => { told.push('stopped') } })
    for (const job of jobs) {
      job.assigned?.()
      job.stopped?.()
    }
    assert.deepEqual(told, ['assigned', 'stopped'])
  })
})
