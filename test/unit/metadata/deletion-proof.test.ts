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

  it('Given the mass absence ends (the topics listed again), then the counts start again', async () => {
    const proof = new DeletionProof()
    await proof.check(['a', 'b'], absent, 3)
    await proof.check([], absent, 3)
    assert.equal(proof.massAbsence, null)
    assert.equal((await proof.check(['a'], absent, 3)).get('a')?.verdict, MissingVerdicts.ABSENT_ONCE)
  })
})
