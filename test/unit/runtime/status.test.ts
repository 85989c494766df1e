import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { renderStatus } from '../../../src/cli/status-command.ts'
import { lagInRecords, lagInSeconds, lastTargetOffset } from '../../../src/runtime/status.ts'

describe('status arithmetic', () => {
  it('counts the records from the next offset to read up to the log end, never below 0', () => {
    assert.equal(lagInRecords(99, 100), 0)
    assert.equal(lagInRecords(49, 100), 50)
    assert.equal(lagInRecords(120, 100), 0)
  })

  it('measures lag in seconds from the oldest record not yet copied; 0 when none is pending or it is in the future', () => {
    assert.equal(lagInSeconds(null, 10_000), 0)
    assert.equal(lagInSeconds(7_500, 10_000), 2.5)
    assert.equal(lagInSeconds(12_000, 10_000), 0)
  })

  it('takes the target offset of the last copied record from the exact translation of the next one', () => {
    // Source 0..4 → target 0..4, a marker at 5, last replicated 5: the next source offset 6 translates to 5.
    assert.deepEqual(lastTargetOffset({ offset: 5, exact: true }), { offset: 4 })
    assert.deepEqual(lastTargetOffset({ offset: 5, exact: false, reason: 'beyond' }), { offset: null, reason: 'beyond' })
    assert.deepEqual(lastTargetOffset(undefined), { offset: null, reason: 'no offset history for this partition' })
  })
})

describe('renderStatus', () => {
  it('shows unknown values when the source is unreachable and the reason of an unknown target offset', () => {
    const text = renderStatus({
      flow: 'A->B', targetReachable: true, sourceReachable: false, error: 'down',
      partitions: [{ topic: 'orders', partition: 0, remoteTopic: 'A.orders', lastReplicatedOffset: 9, targetOffset: null, targetOffsetUnknown: 'no offset history for this partition', sourceLogEnd: null, lagRecords: null, lagSeconds: null }]
    })
    assert.match(text, /^flow A->B: source unreachable/)
    assert.match(text, /orders\s+0\s+9\s+A\.orders\s+unknown: no offset history for this partition\s+\?\s+\?\s+\?$/m)
  })
})
