/**
 * Flows start together (src/runtime/start-together.ts): start-up waits for the slowest flow's first assignment,
 * not for the sum of them, and a flow that fails ends the others' starts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTogether } from '../../../src/runtime/start-together.ts'

/** A start that resolves when `finish` is called and rejects with the signal's reason when it aborts. */
function pendingStart (): { start: (signal: AbortSignal) => Promise<void>, finish: () => void, began: boolean, endedBy?: unknown } {
  let finish = (): void => undefined
  const handle = {
    began: false,
    endedBy: undefined as unknown,
    finish: () => finish(),
    start: (signal: AbortSignal) => new Promise<void>((resolve, reject) => {
      handle.began = true
      finish = resolve
      signal.addEventListener('abort', () => {
        handle.endedBy = signal.reason
        reject(signal.reason)
      }, { once: true })
    })
  }
  return handle
}

test('every flow starts at once, and start-up resolves only after the last one started', async () => {
  const flows = [pendingStart(), pendingStart(), pendingStart()]
  let settled = false
  const started = startTogether(flows.length, (i, signal) => flows[i]!.start(signal), new AbortController().signal)
    .then(result => { settled = true; return result })
  await Promise.resolve()
  assert.deepEqual(flows.map(f => f.began), [true, true, true], 'no flow waits for another one to start')
  flows[2]!.finish()
  flows[0]!.finish()
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(settled, false, 'flow 1 has not started yet')
  flows[1]!.finish()
  assert.equal(await started, undefined)
})

test('the first flow to fail ends the starts of the others and is the failure reported', async () => {
  const flows = [pendingStart(), pendingStart(), pendingStart()]
  const boom = new Error('flow 1: TOPIC_AUTHORIZATION_FAILED')
  const started = startTogether(flows.length, async (i, signal) => {
    if (i === 1) throw boom
    await flows[i]!.start(signal)
  }, new AbortController().signal)
  assert.deepEqual(await started, { index: 1, error: boom })
  assert.equal(flows[0]!.endedBy, boom, 'flow 0 stopped waiting for its first assignment')
  assert.equal(flows[2]!.endedBy, boom)
})

test('stopping during start ends every start, and reports no failure of a flow', async () => {
  const flows = [pendingStart(), pendingStart()]
  const stop = new AbortController()
  const started = startTogether(flows.length, (i, signal) => flows[i]!.start(signal), stop.signal)
  flows[0]!.finish()
  const reason = new Error('stopping')
  stop.abort(reason)
  assert.equal(await started, undefined)
  assert.equal(flows[1]!.endedBy, reason)
})
