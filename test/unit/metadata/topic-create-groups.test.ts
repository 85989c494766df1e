import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { NewTopic } from '../../../src/kafka/admin-client.ts'
import type { BatchCreateResult } from '../../../src/kafka/topic-batch-create.ts'
import { silentLogger } from '../../../src/logger.ts'
import { applyTopicSyncPlan, THROTTLED_WAIT_MS, type TopicWriter } from '../../../src/metadata/topic-sync-apply.ts'
import type { CreateTopicAction, TopicSyncPlan } from '../../../src/metadata/topic-sync-plan.ts'
import { noMetrics } from '../../../src/metrics/metrics.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

function action (name: string, partitions = 1, configs: Record<string, string> = {}): CreateTopicAction {
  return { topic: name, remoteTopic: `A.${name}`, partitions, replicationFactor: 1, configs }
}

function planOf (create: CreateTopicAction[]): TopicSyncPlan {
  return { flow: 'A->B', topics: create.map(c => ({ source: c.topic, remote: c.remoteTopic, partitions: c.partitions })), create, addPartitions: [], alterConfigs: [], problems: [], warnings: [], configsUnread: [], deletedOnSource: [], recreatedOnSource: [] }
}

/** A target answering each batch as ANSWER says (default: every topic created); per-topic requests create. */
function fakeTarget (answer: (names: string[]) => BatchCreateResult = names => ({ created: names, exists: [], failed: new Map(), throttleMs: 0 })) {
  const batches: { name: string, partitions: number }[][] = []
  const singles: string[] = []
  const target: TopicWriter = {
    createTopics: async (topics: readonly NewTopic[]) => {
      batches.push(topics.map(t => ({ name: t.name, partitions: t.partitions })))
      return answer(topics.map(t => t.name))
    },
    createTopic: async (t: NewTopic) => { singles.push(t.name); return 'created' as const },
    createPartitions: async () => undefined,
    alterTopicConfigs: async () => undefined,
    deleteTopics: async () => undefined
  }
  return { target, batches, singles }
}

describe('creating remote topics', () => {
  it('creates topics with the same configs in one request, each with its own partitions; a topic alone in its configs in a request of its own', async () => {
    const { target, batches, singles } = fakeTarget()
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b'), action('c', 3), action('d'), action('e', 1, { 'cleanup.policy': 'compact' })]), { target }, silentLogger(), noMetrics)
    assert.deepEqual(batches, [[{ name: 'A.a', partitions: 1 }, { name: 'A.b', partitions: 1 }, { name: 'A.c', partitions: 3 }, { name: 'A.d', partitions: 1 }], [{ name: 'A.e', partitions: 1 }]])
    assert.deepEqual(singles, [])
    assert.deepEqual([...result.created].sort(), ['A.a', 'A.b', 'A.c', 'A.d', 'A.e'])
    assert.deepEqual(result.topics.map(t => t.source).sort(), ['a', 'b', 'c', 'd', 'e'])
  })

  it('splits topics into requests within the controller\'s record budget (2,000 topics of 5 partitions: 12,000 records, refused in one request)', async () => {
    const { target, batches, singles } = fakeTarget()
    const topics = Array.from({ length: 2_000 }, (_, i) => action(`t${i}`, 5))
    const result = await applyTopicSyncPlan(planOf(topics), { target }, silentLogger(), noMetrics)
    assert.deepEqual(batches.map(b => b.length), [1333, 667])
    assert.deepEqual(batches.flat().map(t => t.name), topics.map(t => t.remoteTopic))
    assert.deepEqual(singles, [])
    assert.equal(result.created.length, 2_000)
  })

  it('counts what a partly refused request created, leaves a topic that existed to the next refresh, and asks only for the refused one again', async () => {
    const { target, batches, singles } = fakeTarget(() => ({ created: ['A.a'], exists: ['A.b'], failed: new Map([['A.c', 'TOPIC_AUTHORIZATION_FAILED']]), throttleMs: 0 }))
    const { log, lines } = memoryLogger()
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b'), action('c')]), { target }, log, noMetrics)
    assert.equal(batches.length, 1)
    assert.deepEqual(singles, ['A.c'])
    assert.deepEqual([...result.created].sort(), ['A.a', 'A.c'])
    assert.deepEqual(result.topics.map(t => t.source).sort(), ['a', 'c'], 'b is not known to be usable until the next refresh checks it')
    assert.deepEqual(lines.filter(l => l.msg === 'remote topic appeared meanwhile; it is checked at the next refresh').map(l => l['remoteTopic']), ['A.b'])
    assert.deepEqual(lines.filter(l => l.msg === 'created remote topic').map(l => l['remoteTopic']).sort(), ['A.a', 'A.c'])
  })

  it('asks topic by topic when a request has no answer (whether anything was created is unknown), and says so', async () => {
    const { target, batches, singles } = fakeTarget(() => { throw new Error('request timed out') })
    const { log, lines } = memoryLogger()
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b')]), { target }, log, noMetrics)
    assert.equal(batches.length, 1)
    assert.deepEqual(singles, ['A.a', 'A.b'])
    assert.deepEqual([...result.created].sort(), ['A.a', 'A.b'])
    const fallback = lines.find(l => l.msg === 'creating remote topics together failed; creating them one by one')
    assert.equal(fallback?.level, LogLevels.info)
    assert.equal(fallback['topics'], 2)
    assert.equal(fallback['err'], 'request timed out')
  })

  it('looks at the run\'s signal before each batch: a batch sent is counted, the ones after it are skipped and named', async () => {
    const run = new AbortController()
    const { target, batches, singles } = fakeTarget(names => {
      run.abort(new Error('membership lost'))
      return { created: names, exists: [], failed: new Map(), throttleMs: 0 }
    })
    const plan = planOf([action('a'), action('b'), action('c', 1, { 'cleanup.policy': 'compact' }), action('d', 1, { 'cleanup.policy': 'compact' })])
    const result = await applyTopicSyncPlan(plan, { target }, silentLogger(), noMetrics, run.signal)
    assert.deepEqual(batches.map(b => b.map(t => t.name)), [['A.a', 'A.b']])
    assert.deepEqual(singles, [])
    assert.deepEqual([...result.created], ['A.a', 'A.b'])
    assert.deepEqual([...(result.aborted?.skipped ?? [])].sort(), ['c', 'd'])
  })

  it('sends the topics a controller mutation quota refused again, together, once its throttle time has passed; never one by one', async () => {
    const sentAt: number[] = []
    const { target, batches, singles } = fakeTarget(names => {
      sentAt.push(Date.now())
      // The quota lets two topics through each time, and asks for 150 ms
      const [first, second, ...rest] = names
      return { created: [first!, second!].filter(n => n !== undefined), exists: [], failed: new Map(rest.map(n => [n, 'THROTTLING_QUOTA_EXCEEDED'])), throttleMs: 150 }
    })
    const result = await applyTopicSyncPlan(planOf(['a', 'b', 'c', 'd', 'e'].map(n => action(n))), { target }, silentLogger(), noMetrics)
    assert.deepEqual(batches.map(b => b.map(t => t.name)), [['A.a', 'A.b', 'A.c', 'A.d', 'A.e'], ['A.c', 'A.d', 'A.e'], ['A.e']])
    assert.ok(sentAt.slice(1).every((at, i) => at - sentAt[i]! >= 145), `each request after the throttle time: ${sentAt.map(at => at - sentAt[0]!).join(', ')} ms`)
    assert.deepEqual(singles, [])
    assert.deepEqual([...result.created], ['A.a', 'A.b', 'A.c', 'A.d', 'A.e'])
    assert.deepEqual(result.problems, [])
  })

  it('makes the topics a quota still refuses past THROTTLED_WAIT_MS problems naming the quota and the cluster, tried again at the next refresh, not replicated yet', async () => {
    const { target, batches, singles } = fakeTarget(names => ({ created: [], exists: [], failed: new Map(names.map(n => [n, 'THROTTLING_QUOTA_EXCEEDED'])), throttleMs: THROTTLED_WAIT_MS + 1 }))
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b')]), { target, targetAlias: 'B' }, silentLogger(), noMetrics)
    assert.equal(batches.length, 1)
    assert.deepEqual(singles, [])
    assert.deepEqual([...result.created], [])
    assert.deepEqual(result.topics, [])
    assert.deepEqual(result.problems.map(p => p.topic), ['a', 'b'])
    assert.equal(result.problems[0]!.message, `remote topic A.a is not created yet: cluster B throttles kmirror's topic creations (THROTTLING_QUOTA_EXCEEDED: a controller_mutation_rate quota, KIP-599) past ${THROTTLED_WAIT_MS / 1000} s of waiting in this refresh; the next refresh tries again. To create remote topics faster, raise or remove the quota of kmirror's admin client on cluster B (the throttle warning names its client id and the kafka-configs.sh line)`)
  })

  it('stops waiting for a quota when the run is aborted: the throttled topics are skipped, not created one by one', async () => {
    const run = new AbortController()
    const { target, batches, singles } = fakeTarget(names => {
      setTimeout(() => run.abort(new Error('membership lost')), 5)
      return { created: [names[0]!], exists: [], failed: new Map(names.slice(1).map(n => [n, 'THROTTLING_QUOTA_EXCEEDED'])), throttleMs: 10_000 }
    })
    const started = Date.now()
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b'), action('c')]), { target }, silentLogger(), noMetrics, run.signal)
    assert.ok(Date.now() - started < 5_000, 'the wait ends with the run')
    assert.equal(batches.length, 1)
    assert.deepEqual(singles, [])
    assert.deepEqual([...result.created], ['A.a'])
    assert.deepEqual(result.topics.map(t => t.source), ['a'])
    assert.deepEqual([...(result.aborted?.skipped ?? [])].sort(), ['b', 'c'])
    assert.deepEqual(result.problems, [])
  })
})
