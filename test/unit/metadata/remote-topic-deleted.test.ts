/**
 * A remote topic missing from the target's metadata while its source topic is replicated: deleted by hand, or only
 * not in the answer yet (a broker whose metadata lags behind its controller). Only the creation's outcome tells.
 */
import { partitionKey } from '../../../src/topic-partition.ts'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { NewTopic } from '../../../src/kafka/admin-client.ts'
import { RemoteTopics } from '../../../src/metadata/remote-topics.ts'
import { THROTTLED_WAIT_MS } from '../../../src/metadata/topic-sync-apply.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

function setup () {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', 'replication.factor = 1'].join('\n'), 'mm2.properties')
  const flow = config.flows.find(f => f.name === 'A->B')!
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  const logs = memoryLogger()
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, logs.log)
  const stopped: string[][] = []
  const refresh = () => topics.refresh({ stopReplicating: async names => { stopped.push([...names]) } })
  return { source, target, logs, stopped, refresh, topics }
}

describe('RemoteTopics.refresh with a remote topic missing from the target', () => {
  it('a remote topic only missing from a lagging metadata answer is kept: no error, nothing stopped, nothing copied again', async () => {
    // Given orders replicated into A.orders
    const { source, target, logs, stopped, refresh } = setup()
    source.addTopic('orders', 3)
    await refresh()
    const id = target.topicId('A.orders')

    // When the target's metadata answer leaves A.orders out although it exists (as a busy broker's does after a creation)
    target.lagMetadata('A.orders')
    const lagging = await refresh()
    target.lagMetadata('A.orders', false)
    const after = await refresh()

    // Then nothing is said to be deleted, the data path keeps the topic, and nothing is copied again
    assert.deepEqual(logs.at(LogLevels.error), [])
    assert.deepEqual(stopped, [])
    assert.deepEqual(lagging.removed, [])
    assert.deepEqual(lagging.recopy, [])
    assert.deepEqual(lagging.topics.map(t => [t.source, t.partitions]), [['orders', 3]])
    assert.deepEqual(after.recopy, [])
    assert.equal(target.topicId('A.orders'), id)
    assert.equal(logs.lines.filter(l => String(l.msg).includes('was missing from the metadata of cluster B but exists')).length, 1)
  })

  it('a remote topic left out of the metadata over several refreshes is told once (at info, the creation\'s "appeared meanwhile" at debug), and again in a later episode', async () => {
    // Given orders replicated into A.orders
    const { source, target, logs, refresh } = setup()
    source.addTopic('orders', 3)
    await refresh()
    const told = () => logs.lines.filter(l => String(l.msg).includes('was missing from the metadata of cluster B but exists')).map(l => l.level)
    const appeared = () => logs.lines.filter(l => l.msg === 'remote topic appeared meanwhile; it is checked at the next refresh').map(l => l.level)

    // When three refreshes in a row get a metadata answer without A.orders (a broker still applying earlier creations)
    target.lagMetadata('A.orders')
    for (let i = 0; i < 3; i++) await refresh()

    // Then it is told once at info, and each creation that found it there only at debug level
    assert.deepEqual(told(), [LogLevels.info])
    assert.deepEqual(appeared(), [LogLevels.debug, LogLevels.debug, LogLevels.debug])

    // And once seen again, a later lag is a new episode, told again
    target.lagMetadata('A.orders', false)
    await refresh()
    target.lagMetadata('A.orders')
    await refresh()
    assert.deepEqual(told(), [LogLevels.info, LogLevels.info])
  })

  it('a new topic a controller mutation quota holds back is a problem until created: never taken for existing, nor later for deleted', async () => {
    // Given orders replicated, and a target whose quota refuses every creation past the refresh's wait
    const { source, target, logs, refresh } = setup()
    source.addTopic('orders', 1)
    await refresh()
    let throttling = true
    Object.assign(target, {
      createTopics: async (list: readonly NewTopic[]) => {
        if (throttling) return { created: [], exists: [], failed: new Map(list.map(t => [t.name, 'THROTTLING_QUOTA_EXCEEDED'])), throttleMs: THROTTLED_WAIT_MS + 1 }
        for (const t of list) await target.createTopic(t)
        return { created: list.map(t => t.name), exists: [], failed: new Map(), throttleMs: 0 }
      }
    })

    // When two new source topics meet the quota at two refreshes, then are created at a third
    source.addTopic('payments', 1)
    source.addTopic('refunds', 1)
    const first = await refresh()
    const second = await refresh()
    throttling = false
    const third = await refresh()

    // Then they are problems and not replicated while held back, created at the third, and nothing said of them
    // existing (metadata behind) or being deleted
    for (const held of [first, second]) {
      assert.deepEqual(held.topics.map(t => t.source), ['orders'])
      assert.deepEqual(held.problems.map(p => p.topic), ['payments', 'refunds'])
    }
    assert.deepEqual([...third.created].sort(), ['A.payments', 'A.refunds'])
    assert.deepEqual(third.topics.map(t => t.source).sort(), ['orders', 'payments', 'refunds'])
    assert.deepEqual(logs.lines.filter(l => /metadata was behind|was deleted on cluster/.test(String(l.msg))), [])
    assert.deepEqual(logs.at(LogLevels.info).filter(l => l.msg === 'remote topic problem solved').map(l => l['topic']).sort(), ['payments', 'refunds'])
  })

  it('a remote topic deleted by hand is created again with an error line; with topic ids the data path, not the refresh, copies it again', async () => {
    // Given orders replicated into A.orders on a target with topic ids
    const { source, target, logs, stopped, refresh } = setup()
    source.addTopic('orders', 2)
    await refresh()
    const before = target.topicId('A.orders')

    // When A.orders is deleted on the target
    await target.deleteTopics(['A.orders'])
    const result = await refresh()

    // Then it is created again (a new id), said at error level, and left to every partition owner's data path
    assert.notEqual(target.topicId('A.orders'), before)
    assert.deepEqual(result.created, ['A.orders'])
    assert.deepEqual(result.recopy, [])
    assert.deepEqual(stopped, [])
    assert.deepEqual(result.topics.map(t => t.source), ['orders'])
    const errors = logs.at(LogLevels.error).map(l => l.msg)
    assert.deepEqual(errors, ['remote topic A.orders was deleted on cluster B while kmirror replicated orders: created it again; every instance copying a partition of orders sees the new topic id at its next write and copies that partition again from the log start of cluster A (records retention already deleted there cannot be copied again)'])
  })

  it('on a target without topic ids, a remote topic deleted by hand is copied again by the refreshing instance, after its creation', async () => {
    // Given orders replicated into A.orders on a target without topic ids (before Kafka 2.8)
    const { source, target, logs, stopped, refresh } = setup()
    target.withoutTopicIds = true
    source.addTopic('orders', 2)
    await refresh()

    // When A.orders is deleted, and its first creation again fails
    await target.deleteTopics(['A.orders'])
    target.failNext('createTopic', 'A.orders', new Error('request timed out'))
    const failed = await refresh()
    const result = await refresh()

    // Then nothing is copied again until it is created; then its data path is stopped and it is listed in recopy
    assert.deepEqual(failed.recopy, [])
    assert.deepEqual(result.recopy, ['orders'])
    assert.deepEqual(stopped, [['orders']])
    assert.equal(logs.at(LogLevels.error).filter(l => String(l.msg).includes('copying orders again from the log start of cluster A')).length, 1)
  })

  it('on a target without topic ids, in a group, the error line names the partitions other instances copy, which are not copied again, and how to get them copied', async () => {
    // Given orders (3 partitions) replicated into A.orders on a target without topic ids, this instance copying partition 1
    const { source, target, logs, topics } = setup()
    target.withoutTopicIds = true
    source.addTopic('orders', 3)
    const owns = (tp: string): boolean => tp === partitionKey('orders', 1)
    await topics.refresh({ owns })
    // When A.orders is deleted by hand
    await target.deleteTopics(['A.orders'])
    const again: string[][] = []
    const result = await topics.refresh({ owns, copyAgain: async t => { again.push(t.map(x => x.source)) } })
    // Then this instance copies its partition again, and the error line says 0 and 2 are not copied again
    assert.deepEqual([result.recopy, again], [['orders'], [['orders']]])
    const line = logs.at(LogLevels.error).find(l => String(l.msg).startsWith('remote topic A.orders was deleted'))!
    assert.equal(line.msg, 'remote topic A.orders was deleted on cluster B while kmirror replicated orders: created it again; copying the partitions of orders this instance copies again ' +
      'from the log start of cluster A (records retention already deleted there cannot be copied again). Partition(s) 0, 2 are not this instance\'s: their stored positions are forgotten, ' +
      'so one whose next owner reads them after this starts over, but a kmirror instance copying one already goes on from its position (a target without topic ids, before Kafka 2.8, ' +
      'cannot tell it the topic is new), and A.orders lacks its records before that. ' +
      'Fix: stop every kmirror instance of the group but one, then delete A.orders again: that instance copies every partition again; then start the others')
    assert.deepEqual(line.notCopiedAgain, [0, 2])
  })

  it('a remote topic another instance created first, deleted before this refresh saw it, counts as deleted: on a target without topic ids it is copied again', async () => {
    // Given orders, whose remote topic another instance creates just before this one (its creation finds it there)
    const { source, target, logs, stopped, refresh } = setup()
    target.withoutTopicIds = true
    source.addTopic('orders', 2)
    target.raceCreate('A.orders', 2)
    const first = await refresh()
    assert.deepEqual(first.created, [])

    // When A.orders is deleted on the target before this instance's next refresh
    await target.deleteTopics(['A.orders'])
    const result = await refresh()

    // Then that refresh creates it again as a deleted topic, not a new one: said at error level, copied again
    assert.deepEqual(result.created, ['A.orders'])
    assert.deepEqual(result.recopy, ['orders'])
    assert.deepEqual(stopped, [['orders']])
    assert.equal(logs.at(LogLevels.error).filter(l => String(l.msg).startsWith('remote topic A.orders was deleted on cluster B')).length, 1)
  })

  it('a remote topic another instance created first is replicated from the next refresh, nothing said deleted', async () => {
    const { source, target, logs, stopped, refresh } = setup()
    source.addTopic('orders', 2)
    target.raceCreate('A.orders', 2)
    await refresh()
    const next = await refresh()
    assert.deepEqual(next.topics.map(t => [t.source, t.partitions]), [['orders', 2]])
    assert.deepEqual([next.created, next.recopy, stopped, logs.at(LogLevels.error)], [[], [], [], []])
  })
})
