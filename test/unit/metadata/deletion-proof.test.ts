import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TopicPresences, type TopicProbe } from '../../../src/kafka/admin-client.ts'
import { ABSENT_REFRESHES_FOR_MASS_DELETION, DeletionProof, MissingVerdicts } from '../../../src/metadata/deletion-proof.ts'

const absent = async (names: readonly string[]): Promise<Map<string, TopicProbe>> => new Map(names.map(n => [n, { presence: TopicPresences.ABSENT, error: 'UNKNOWN_TOPIC_OR_PARTITION' }]))

describe('DeletionProof', () => {
  it('proves one topic deleted at its second absent answer in a row', async () => {
    const proof = new DeletionProof()
    assert.equal((await proof.check(['orders'], absent, 10)).get('orders')?.verdict, MissingVerdicts.ABSENT_ONCE)
    assert.equal((await proof.check(['orders'], absent, 10)).get('orders')?.verdict, MissingVerdicts.DELETED)
    assert.equal(proof.massAbsence, null)
  })

  it('Given most replicated topics absent at once (a broker answering from an empty cache, another cluster), then deletion takes 12 refreshes, and the mass absence is told', async () => {
    const proof = new DeletionProof()
    const topics = ['a', 'b', 'c']
    for (let refresh = 1; refresh < ABSENT_REFRESHES_FOR_MASS_DELETION; refresh++) {
      const verdicts = await proof.check(topics, absent, 4)
      assert.deepEqual([...verdicts.values()].map(v => v.verdict), [MissingVerdicts.ABSENT_ONCE, MissingVerdicts.ABSENT_ONCE, MissingVerdicts.ABSENT_ONCE], `refresh ${refresh}`)
      assert.deepEqual(proof.massAbsence, { absent: 3, replicated: 4 })
    }
    assert.deepEqual([...(await proof.check(topics, absent, 4)).values()].map(v => v.verdict), [MissingVerdicts.DELETED, MissingVerdicts.DELETED, MissingVerdicts.DELETED])
  })

  it('Given 4 topics all absent at one check, when only 2 of them are absent at the next (no more than half), then those 2 still need 12 absences: the threshold is fixed when their absence starts', async () => {
    const proof = new DeletionProof()
    await proof.check(['a', 'b', 'c', 'd'], absent, 4)
    for (let check = 2; check < ABSENT_REFRESHES_FOR_MASS_DELETION; check++) {
      const verdicts = await proof.check(['a', 'b'], absent, 4)
      assert.equal(proof.massAbsence, null)
      assert.deepEqual([...verdicts.values()], [
        { verdict: MissingVerdicts.ABSENT_ONCE, error: 'UNKNOWN_TOPIC_OR_PARTITION', massAbsence: true },
        { verdict: MissingVerdicts.ABSENT_ONCE, error: 'UNKNOWN_TOPIC_OR_PARTITION', massAbsence: true }
      ], `check ${check}`)
    }
    // Then deleted at the twelfth, marked as proven over a mass absence (their remote topics are never deleted)
    assert.deepEqual([...(await proof.check(['a', 'b'], absent, 4)).values()], [
      { verdict: MissingVerdicts.DELETED, error: 'UNKNOWN_TOPIC_OR_PARTITION', massAbsence: true },
      { verdict: MissingVerdicts.DELETED, error: 'UNKNOWN_TOPIC_OR_PARTITION', massAbsence: true }
    ])
  })

  it('Given a topic absent alone, when a mass absence follows, then it needs 12 absences too; a topic whose absence starts after the mass absence needs 2, unmarked', async () => {
    const proof = new DeletionProof()
    await proof.check(['a'], absent, 4)
    assert.equal((await proof.check(['a', 'b', 'c'], absent, 4)).get('a')?.verdict, MissingVerdicts.ABSENT_ONCE)
    await proof.check(['a', 'd'], absent, 4)
    const verdicts = await proof.check(['a', 'd'], absent, 4)
    assert.deepEqual(verdicts.get('a'), { verdict: MissingVerdicts.ABSENT_ONCE, error: 'UNKNOWN_TOPIC_OR_PARTITION', massAbsence: true })
    assert.deepEqual(verdicts.get('d'), { verdict: MissingVerdicts.DELETED, error: 'UNKNOWN_TOPIC_OR_PARTITION' })
  })

  it('Given the mass absence ends (the topics listed again), then the counts start again', async () => {
    const proof = new DeletionProof()
    await proof.check(['a', 'b'], absent, 3)
    await proof.check([], absent, 3)
    assert.equal(proof.massAbsence, null)
    assert.equal((await proof.check(['a'], absent, 3)).get('a')?.verdict, MissingVerdicts.ABSENT_ONCE)
  })
})
