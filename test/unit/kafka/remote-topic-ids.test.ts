import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RemoteTopicIds } from '../../../src/kafka/remote-topic-ids.ts'

/** Checks as the BatchWriter does: a re-creation found is then reported (its write returned the failure). */
function checked (ids: RemoteTopicIds, partition: number, id: string | null): string {
  const found = ids.check('A.t', partition, id)
  if (found.kind === 'recreated') ids.reported('A.t', partition)
  return found.kind
}

describe('RemoteTopicIds', () => {
  it('Given a partition written under an id, then the same id is current and another one is a re-creation, reported once', () => {
    const ids = new RemoteTopicIds()
    assert.deepEqual(ids.check('A.t', 0, 'id-1'), { kind: 'current' })
    assert.deepEqual(ids.check('A.t', 0, 'id-1'), { kind: 'current' })
    assert.deepEqual(ids.check('A.t', 0, 'id-2'), { kind: 'recreated', before: 'id-1' })
    ids.reported('A.t', 0)
    assert.deepEqual(ids.check('A.t', 0, 'id-2'), { kind: 'current' })
  })

  it('Given a re-creation found by a write that then threw (another broker failed), then the next check finds it again, until it was reported', () => {
    const ids = new RemoteTopicIds()
    ids.check('A.t', 0, 'id-1')
    assert.deepEqual(ids.check('A.t', 0, 'id-2'), { kind: 'recreated', before: 'id-1' })
    assert.deepEqual(ids.check('A.t', 0, 'id-2'), { kind: 'recreated', before: 'id-1' })
    assert.deepEqual(ids.check('A.t', 0, 'id-1'), { kind: 'recreated', before: 'id-1' }, 'a lagging broker\'s answer too')
    ids.reported('A.t', 0)
    assert.deepEqual(ids.check('A.t', 0, 'id-2'), { kind: 'current' })
  })

  it('Given brokers answering the old and the new id in turn (metadata propagation after a re-creation), then the re-creation is reported once and every old answer is stale', () => {
    // Given A.t-0 and A.t-1 written under id-1
    const ids = new RemoteTopicIds()
    ids.check('A.t', 0, 'id-1')
    ids.check('A.t', 1, 'id-1')

    // When the brokers answer id-2 (up to date) and id-1 (lagging) in turn
    const answers = ['id-2', 'id-1', 'id-2', 'id-1', 'id-1', 'id-2'].map(id => checked(ids, 0, id))

    // Then A.t-0 is copied again once; id-1 answers are stale whatever came before them
    assert.deepEqual(answers, ['recreated', 'stale', 'current', 'stale', 'stale', 'current'])

    // And A.t-1, which has not seen id-2 yet, holds on a stale id-1 answer, and is re-created once at its id-2
    assert.deepEqual(['id-1', 'id-2', 'id-1', 'id-2'].map(id => checked(ids, 1, id)), ['stale', 'recreated', 'stale', 'current'])
  })

  it('Given a lagging broker answering first, then its old id is current until the new one is seen, and stale from then on', () => {
    const ids = new RemoteTopicIds()
    ids.check('A.t', 0, 'id-1')
    assert.deepEqual(['id-1', 'id-2', 'id-1', 'id-2'].map(id => checked(ids, 0, id)), ['current', 'recreated', 'stale', 'current'])
  })

  it('Given a partition forgotten (it left the data path), then it learns the id afresh, but a retired id stays stale', () => {
    const ids = new RemoteTopicIds()
    ids.check('A.t', 0, 'id-1')
    ids.check('A.t', 0, 'id-2')
    ids.forget('A.t', 0)
    assert.deepEqual(ids.check('A.t', 0, 'id-1'), { kind: 'stale', id: 'id-1' })
    assert.deepEqual(ids.check('A.t', 0, 'id-3'), { kind: 'current' })
  })

  it('Given brokers without topic ids (before Kafka 2.8), then nothing is learned or compared', () => {
    const ids = new RemoteTopicIds()
    assert.deepEqual(ids.check('A.t', 0, null), { kind: 'current' })
    assert.deepEqual(ids.check('A.t', 0, undefined), { kind: 'current' })
    assert.deepEqual(ids.check('A.t', 0, 'id-1'), { kind: 'current' })
  })
})
