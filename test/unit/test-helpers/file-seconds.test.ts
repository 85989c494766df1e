/**
 * The timing reporter of scripts/run-tests.ts (scripts/file-seconds.ts): each file charged from its first event
 * to the next file's, a file seen again adding up, and the lanes' records joined into one paste-ready line.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fileSecondsReporter, { describeFileSeconds, fileKey, FileClock, type FileEvent } from '../../../scripts/file-seconds.ts'

test('a file is keyed as the lane weights key it: no directory, no .test.ts', () => {
  assert.equal(fileKey('/repo/test/integration/broker-kill.test.ts'), 'broker-kill')
  assert.equal(fileKey('demo.test.ts'), 'demo')
})

test('each file runs from its first event to the next file\'s first event; a file seen again adds up', () => {
  let now = 0
  const clock = new FileClock(() => now)
  clock.seen('test/integration/a.test.ts')
  now = 4_000
  clock.seen('test/integration/a.test.ts')
  now = 10_400
  clock.seen('test/integration/b.test.ts')
  now = 12_000
  clock.seen('test/integration/a.test.ts')
  now = 13_000
  assert.deepEqual(clock.end(), [['a', 11], ['b', 2]], 'a: 10.4 s then 1 s; b: 1.6 s; longest first')
})

test('the reporter yields one JSON object once the events end, charging a file from its dequeue, not from the enqueue of the file before', async () => {
  // The runner's order (Node 24): the next file is queued as soon as one is dequeued, before the first one's tests.
  const seen: Array<[number, FileEvent]> = [
    [0, { type: 'test:enqueue', data: { file: 'x/c.test.ts' } }],
    [0, { type: 'test:dequeue', data: { file: 'x/c.test.ts' } }],
    [0, { type: 'test:enqueue', data: { file: 'x/d.test.ts' } }],
    [3_000, { type: 'test:pass', data: { file: 'x/c.test.ts' } }],
    [3_000, {}],
    [5_000, { type: 'test:dequeue', data: { file: 'x/d.test.ts' } }],
    [6_000, { type: 'test:pass', data: { file: 'x/d.test.ts' } }]
  ]
  const realNow = Date.now
  let now = 0
  Date.now = () => now
  try {
    async function * events (): AsyncGenerator<FileEvent> {
      for (const [at, event] of seen) {
        now = at
        yield event
      }
    }
    const out: string[] = []
    for await (const chunk of fileSecondsReporter(events())) out.push(chunk)
    assert.equal(out.length, 1)
    assert.deepEqual(JSON.parse(out[0]!), { c: 5, d: 1 }, 'c from its dequeue to d\'s (its start-up its own), d to the end')
  } finally {
    Date.now = realNow
  }
})

test('the lanes\' records make one line, longest first, with the count and the total', () => {
  assert.equal(
    describeFileSeconds('{"a":5,"b":30}', '{"c":12}'),
    "seconds each file took (3 files, 47 s; the weights of scripts/test-lanes.ts): 'b': 30, 'c': 12, 'a': 5"
  )
})
