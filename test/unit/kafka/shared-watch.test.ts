/** One process-wide watch however many users (kafka/shared-watch.ts). */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sharedWatch } from '../../../src/kafka/shared-watch.ts'

test('the watch starts with its first user, stops with its last release (a double release counts once), and starts afresh after', () => {
  const events: string[] = []
  let runs = 0
  const use = sharedWatch(() => {
    const run = ++runs
    events.push(`start ${run}`)
    return () => { events.push(`stop ${run}`) }
  })
  const releaseA = use()
  const releaseB = use()
  releaseA()
  releaseA()
  assert.deepEqual(events, ['start 1'], 'B still uses it')
  releaseB()
  assert.deepEqual(events, ['start 1', 'stop 1'])
  const releaseC = use()
  releaseC()
  assert.deepEqual(events, ['start 1', 'stop 1', 'start 2', 'stop 2'])
})
