import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rejectAfter, resolveAfter } from '../../src/deadline.ts'

const never = new Promise<never>(() => undefined)

describe('deadline', () => {
  it('rejectAfter: the work\'s value or error while in time, the late error after', async () => {
    assert.equal(await rejectAfter(Promise.resolve(7), 1000, () => new Error('late')), 7)
    await assert.rejects(rejectAfter(Promise.reject(new Error('refused')), 1000, () => new Error('late')), /refused/)
    await assert.rejects(rejectAfter(never, 5, () => new Error('late after 5 ms')), /late after 5 ms/)
    await assert.rejects(rejectAfter(never, -10, () => new Error('already late')), /already late/)
  })

  it('resolveAfter: the work\'s value or error while in time, the late value after', async () => {
    assert.equal(await resolveAfter(Promise.resolve('done'), 1000, null), 'done')
    await assert.rejects(resolveAfter(Promise.reject(new Error('refused')), 1000, null), /refused/)
    assert.equal(await resolveAfter(never, 5, null), null)
    assert.deepEqual(await resolveAfter(never, -1, { late: true }), { late: true })
  })

  it('clears its timer once the work settled: a bounded wait does not keep the process alive', async () => {
    const before = process.getActiveResourcesInfo().filter(r => r === 'Timeout').length
    await rejectAfter(Promise.resolve(1), 60_000, () => new Error('late'))
    await resolveAfter(Promise.resolve(1), 60_000, null)
    assert.equal(process.getActiveResourcesInfo().filter(r => r === 'Timeout').length, before)
  })
})
