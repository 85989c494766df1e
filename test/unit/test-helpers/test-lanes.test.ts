/**
 * The integration lanes of scripts/run-tests.ts (scripts/test-lanes.ts): every file in exactly one lane, lanes
 * that never share a port or a state directory, one lane whenever a cluster is external, and the closing
 * counts read from a run's output however it was cut into chunks.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addCounts, LANE_PORT_STEP, laneCount, laneEnv, splitIntoLanes, summaryCounter } from '../../../scripts/test-lanes.ts'

const FILES = Array.from({ length: 65 }, (_, i) => `test/integration/file-${String(i).padStart(2, '0')}.test.ts`)

test('every file lands in exactly one lane, each lane in path order', () => {
  for (const lanes of [1, 2, 3]) {
    const split = splitIntoLanes(FILES, lanes)
    assert.equal(split.length, lanes)
    assert.deepEqual(split.flat().sort(), FILES)
    for (const lane of split) assert.deepEqual(lane, [...lane].sort())
  }
  assert.deepEqual(splitIntoLanes(FILES.slice(0, 1), 2), [FILES.slice(0, 1)], 'no empty lane')
})

test('files of unknown weight are spread evenly', () => {
  const [a, b] = splitIntoLanes(FILES, 2)
  assert.ok(Math.abs(a!.length - b!.length) <= 1, `${a!.length} against ${b!.length}`)
})

test('measured files are balanced by their seconds: the longest does not share its lane with the next longest', () => {
  const files = ['test/integration/active-active-default.test.ts', 'test/integration/mm2-handover.test.ts', ...FILES.slice(0, 4)]
  const split = splitIntoLanes(files, 2)
  const laneOf = (name: string): number => split.findIndex(l => l.some(f => f.includes(name)))
  assert.notEqual(laneOf('active-active-default'), laneOf('mm2-handover'))
})

test('two lanes on 2 cores, one on 1 core or with an external cluster, KMIRROR_TEST_LANES when set', () => {
  assert.equal(laneCount({}, 2), 2)
  assert.equal(laneCount({}, 1), 1)
  assert.equal(laneCount({ KMIRROR_TEST_LANES: '3' }, 2), 3)
  assert.equal(laneCount({ KMIRROR_TEST_LANES: '1' }, 8), 1)
  assert.equal(laneCount({ KMIRROR_TEST_TARGET_BOOTSTRAP: 'kafka:9092' }, 8), 1)
  assert.equal(laneCount({ KMIRROR_TEST_TARGET_BOOTSTRAP: 'kafka:9092', KMIRROR_TEST_LANES: '2' }, 8), 1)
  assert.throws(() => laneCount({ KMIRROR_TEST_LANES: 'two' }, 2), /KMIRROR_TEST_LANES=two must be a whole number from 1 to 4/)
  assert.throws(() => laneCount({ KMIRROR_TEST_LANES: '0' }, 2), /from 1 to 4/)
})

test('lane 1 keeps the run\'s ports and state; the others shift ports by a step each and keep state apart', () => {
  const base = { KMIRROR_TEST_PORT_OFFSET: '5', PATH: '/bin' }
  const first = laneEnv(0, base, '/repo/.state', 60_000)
  assert.equal(first.KMIRROR_TEST_PORT_OFFSET, '5')
  assert.equal(first.KMIRROR_STATE, undefined)
  assert.equal(first.KMIRROR_TEST_LANES, '1', 'a lane never splits again')
  assert.equal(first.KMIRROR_TEST_RUN_TIMEOUT_MS, '60000')
  assert.equal(first.PATH, '/bin')
  const third = laneEnv(2, base, '/repo/.state', 60_000)
  assert.equal(third.KMIRROR_TEST_PORT_OFFSET, String(5 + 2 * LANE_PORT_STEP))
  assert.equal(third.KMIRROR_STATE, '/repo/.state/lane-3')
  // Every test cluster port is within 19092-20300 (plus the trio's +2 per node): a step must clear that span.
  assert.ok(LANE_PORT_STEP > 20_300 - 19_092)
})

test('the closing counts are read however the output is cut, the last summary winning', () => {
  const output = 'ℹ tests 3\nℹ pass 3\nℹ fail 0\n✔ x\n\u001b[34mℹ tests 12\u001b[39m\nℹ pass 11\nℹ fail 1\nℹ duration_ms 5\n'
  for (const size of [1, 7, output.length]) {
    const counter = summaryCounter()
    for (let i = 0; i < output.length; i += size) counter.feed(output.slice(i, i + size))
    assert.deepEqual(counter.counts(), { tests: 12, pass: 11, fail: 1 })
  }
  assert.equal(summaryCounter().counts(), undefined)
})

test('counts add up over the runs that printed them', () => {
  assert.deepEqual(addCounts([{ tests: 3, pass: 3, fail: 0 }, undefined, { tests: 5, pass: 4, fail: 1 }]), { tests: 8, pass: 7, fail: 1 })
  assert.equal(addCounts([undefined, undefined]), undefined)
})
