import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MultipleErrors, ResponseError, TimeoutError, type Admin } from '@platformatic/kafka'
import { createTopicsOnce, type BatchTopic } from '../../../src/kafka/topic-batch-create.ts'

const topic = (name: string, partitions = 1): BatchTopic => ({ name, partitions, replicationFactor: -1, configs: { 'retention.ms': '60000' } })

/** An Admin whose createTopics records its options and answers with ANSWERS in turn (a rejection as the library words it; undefined: all created). */
function adminAnswering (...answers: unknown[]) {
  const sent: unknown[] = []
  const admin = {
    createTopics: async (options: unknown) => {
      sent.push(options)
      const answer = answers.shift()
      if (answer !== undefined) throw answer
      return []
    }
  } as unknown as Admin
  return { admin, sent }
}

/** The library's rejection of a CreateTopics answer in which some topics carry an error (create-topics-v7.js). */
function partlyRefused (codes: Record<string, number>, throttleTimeMs = 0): Error {
  const topics = Object.entries(codes).map(([name, errorCode]) => ({ name, errorCode, errorMessage: errorCode === 0 ? null : 'refused' }))
  const errors: Record<string, [number, string | null]> = Object.fromEntries(topics.flatMap((t, i) => (t.errorCode === 0 ? [] : [[`/topics/${i}`, [t.errorCode, t.errorMessage]]])))
  return new MultipleErrors('Creating topics failed.', [new ResponseError(19, 7, errors, { throttleTimeMs, topics })])
}

describe('creating topics in one request', () => {
  it('sends each topic with its own partitions and replication factor and the shared configs', async () => {
    const { admin, sent } = adminAnswering()
    const result = await createTopicsOnce(admin, [topic('a', 3), topic('b')])
    assert.deepEqual(sent, [{ topics: [{ topic: 'a', partitions: 3, replicas: -1 }, { topic: 'b', partitions: 1, replicas: -1 }], configs: [{ name: 'retention.ms', value: '60000' }] }])
    assert.deepEqual(result, { created: ['a', 'b'], exists: [], failed: new Map(), throttleMs: 0 })
  })

  it('reads each topic\'s answer from a partly refused request: created, existing, refused, and one the answer leaves out', async () => {
    const { admin } = adminAnswering(partlyRefused({ a: 0, b: 36, c: 89 }, 1_250))
    const result = await createTopicsOnce(admin, [topic('a'), topic('b'), topic('c'), topic('d')])
    assert.equal(result.throttleMs, 1_250, 'the throttle time of the answer (KIP-219)')
    assert.deepEqual(result.created, ['a'])
    assert.deepEqual(result.exists, ['b'])
    assert.deepEqual([...result.failed.keys()], ['c', 'd'])
    assert.equal(result.failed.get('c'), 'THROTTLING_QUOTA_EXCEEDED')
    assert.match(result.failed.get('d') ?? '', /^no answer \(Creating topics failed\./)
  })

  it('rejects when there is no answer to read: whether anything was created is unknown', async () => {
    const timeout = new TimeoutError('Request timed out')
    const { admin } = adminAnswering(new MultipleErrors('Creating topics failed.', [timeout]))
    await assert.rejects(createTopicsOnce(admin, [topic('a'), topic('b')]), err => err instanceof MultipleErrors && err.errors[0] === timeout)
  })

  it('sends the topics a broker that is not the controller refused once more (ZooKeeper mode: the library has learned the controller), and no other', async () => {
    const { admin, sent } = adminAnswering(partlyRefused({ a: 41, b: 41, c: 36 }), partlyRefused({ a: 0, b: 41 }))
    const result = await createTopicsOnce(admin, [topic('a'), topic('b'), topic('c')])
    assert.deepEqual(sent.map(o => (o as { topics: { topic: string }[] }).topics.map(t => t.topic)), [['a', 'b', 'c'], ['a', 'b']])
    assert.deepEqual(result.created, ['a'])
    assert.deepEqual(result.exists, ['c'])
    assert.deepEqual([...result.failed], [['b', 'NOT_CONTROLLER']])
  })

  it('refuses topics whose configs differ: one request gives all its topics the same', async () => {
    const { admin, sent } = adminAnswering()
    await assert.rejects(createTopicsOnce(admin, [topic('a'), { ...topic('b'), configs: { 'retention.ms': '1' } }]), /topics a and b differ in configs/)
    assert.deepEqual(sent, [])
  })

  it('sends nothing for no topics', async () => {
    const { admin, sent } = adminAnswering()
    assert.deepEqual(await createTopicsOnce(admin, []), { created: [], exists: [], failed: new Map(), throttleMs: 0 })
    assert.deepEqual(sent, [])
  })
})
