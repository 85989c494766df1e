import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemberPauses } from '../../../src/kafka/member-pauses.ts'

/** Whether P has settled by the time the callbacks queued now have run. */
async function settled (p: Promise<void>): Promise<boolean> {
  let done = false
  void p.then(() => { done = true })
  await new Promise(resolve => setImmediate(resolve))
  return done
}

test('a nap ends when woken; a sleep does not, only the stop ends it; after the stop nothing waits', async () => {
  const pauses = new MemberPauses()
  const nap = pauses.nap(60_000, false)
  const sleep = pauses.sleep(60_000)
  assert.equal(await settled(nap), false)
  pauses.wake()
  assert.equal(await settled(nap), true)
  assert.equal(await settled(sleep), false, 'heartbeats keep their pace through rejoins')
  assert.equal(await settled(pauses.nap(60_000, true)), true, 'a rejoin already asked for: no nap at all')
  pauses.stop()
  assert.equal(await settled(sleep), true)
  assert.equal(await settled(pauses.nap(60_000, false)), true)
  assert.equal(await settled(pauses.sleep(60_000)), true)
})

test('a freeze holds the loops until thawed or stopped', async () => {
  const pauses = new MemberPauses()
  assert.equal(await settled(pauses.unlessFrozen()), true)
  pauses.freeze()
  const frozen = pauses.unlessFrozen()
  assert.equal(await settled(frozen), false)
  pauses.thaw()
  assert.equal(await settled(frozen), true)
  pauses.freeze()
  const again = pauses.unlessFrozen()
  pauses.stop()
  assert.equal(await settled(again), true)
  pauses.freeze()
  assert.equal(await settled(pauses.unlessFrozen()), true, 'no freeze after the stop')
})

test('untilStopped gives the work\'s outcome, or the fallback as soon as the member stops', async () => {
  const pauses = new MemberPauses()
  assert.equal(await pauses.untilStopped(Promise.resolve('listed'), 'none'), 'listed')
  const hanging = pauses.untilStopped(new Promise<string>(() => undefined), 'none')
  pauses.stop()
  assert.equal(await hanging, 'none')
  assert.equal(await pauses.untilStopped(new Promise<string>(() => undefined), 'none'), 'none', 'after the stop too')
})
