import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { NewTopic } from '../../../src/kafka/admin-client.ts'
import { silentLogger } from '../../../src/logger.ts'
import { applyTopicSyncPlan, type TopicWriter } from '../../../src/metadata/topic-sync-apply.ts'
import type { CreateTopicAction, TopicSyncPlan } from '../../../src/metadata/topic-sync-plan.ts'
import { noMetrics } from '../../../src/metrics/metrics.ts'

function action (name: string, partitions = 1, configs: Record<string, string> = {}): CreateTopicAction {
  return { topic: name, remoteTopic: `A.${name}`, partitions, replicationFactor: 1, configs }
}

function planOf (create: CreateTopicAction[]): TopicSyncPlan {
  return { flow: 'A->B', topics: create.map(c => ({ source: c.topic, remote: c.remoteTopic, partitions: c.partitions })), create, addPartitions: [], alterConfigs: [], problems: [], warnings: [], configsUnread: [], deletedOnSource: [], recreatedOnSource: [] }
}

function fakeTarget (failGroups = false) {
  const groups: string[][] = []
  const singles: string[] = []
  const target: TopicWriter = {
    createTopics: async (topics: readonly NewTopic[]) => {
      groups.push(topics.map(t => t.name))
      if (failGroups) throw new Error('TOPIC_ALREADY_EXISTS for one of them')
    },
    createTopic: async (t: NewTopic) => { singles.push(t.name); return 'created' as const },
    createPartitions: async () => undefined,
    alterTopicConfigs: async () => undefined,
    deleteTopics: async () => undefined
  }
  return { target, groups, singles }
}

describe('creating remote topics', () => {
  it('creates topics with the same partitions, replication factor and configs in one request per group', async () => {
    const { target, groups, singles } = fakeTarget()
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b'), action('c', 3), action('d'), action('e', 1, { 'cleanup.policy': 'compact' })]), { target }, silentLogger(), noMetrics)
    assert.deepEqual(groups, [['A.a', 'A.b', 'A.d']])
    assert.deepEqual(singles.sort(), ['A.c', 'A.e'])
    assert.deepEqual([...result.created].sort(), ['A.a', 'A.b', 'A.c', 'A.d', 'A.e'])
  })

  it('falls back to one request per topic when a group request fails, so each topic gets its own outcome', async () => {
    const { target, groups, singles } = fakeTarget(true)
    const result = await applyTopicSyncPlan(planOf([action('a'), action('b')]), { target }, silentLogger(), noMetrics)
    assert.deepEqual(groups, [['A.a', 'A.b']])
    assert.deepEqual(singles, ['A.a', 'A.b'])
    assert.deepEqual([...result.created].sort(), ['A.a', 'A.b'])
  })
})
