/** oneAtATime: runs never overlap, each call gets its own run's outcome, a failed run does not block the next. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { oneAtATime } from '../../src/one-at-a-time.ts'

test('a call made while a run is under way starts once that run ended; a failure reaches its own caller only', async () => {
  const events: string[] = []
  const releases: Array<() => void> = []
  let calls = 0
  const run = oneAtATime(async () => {
    const n = ++calls
    events.push(`start ${n}`)
    await new Promise<void>(resolve => releases.push(resolve))
    events.push(`end ${n}`)
    if (n === 1) throw new Error('first failed')
  })
  const first = run()
  const second = run()
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(events, ['start 1'], 'the second waits for the first')
  releases.shift()!()
  await assert.rejects(first, /first failed/)
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(events, ['start 1', 'end 1', 'start 2'])
  releases.shift()!()
  await second
  assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2'])
})

test('each call\'s arguments go to its own run, also to a run that waited for the one before', async () => {
  const seen: string[] = []
  const run = oneAtATime(async (name: string) => { seen.push(name); await new Promise(resolve => setImmediate(resolve)) })
  await Promise.all([run('first'), run('second')])
  assert.deepEqual(seen, ['first', 'second'])
})
