import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import { RemoteTopics } from '../../../src/metadata/remote-topics.ts'
import type { MetricKey } from '../../../src/metrics/definitions.ts'
import type { Metrics } from '../../../src/metrics/metrics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

function flowWith (...lines: string[]): FlowConfig {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', 'replication.factor = 1', ...lines].join('\n'), 'mm2.properties')
  return config.flows.find(f => f.name === 'A->B')!
}

class RecordingMetrics implements Metrics {
  readonly counters = new Map<MetricKey, number>()
  readonly gauges = new Map<MetricKey, number>()
  inc (metric: MetricKey, _labels: unknown, value = 1): void {
    this.counters.set(metric, (this.counters.get(metric) ?? 0) + value)
  }

  set (metric: MetricKey, _labels: unknown, value: number): void {
    this.gauges.set(metric, value)
  }

  observe (): void {}
  remove (): void {}
}

function setup (...lines: string[]) {
  const flow = flowWith(...lines)
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  const logs = memoryLogger()
  const metrics = new RecordingMetrics()
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, logs.log, metrics)
  const released: string[][] = []
  const stopReplicating = async (names: readonly string[]): Promise<void> => {
    released.push([...names])
    target.calls.push({ op: 'stopReplicating', topics: [...names] })
  }
  return { source, target, logs, metrics, topics, released, refresh: () => topics.refresh({ stopReplicating }) }
}

describe('RemoteTopics.released and acquired', () => {
  it('Given the refresh job left this instance, then its problems are no longer shown; when it comes back, an absence counted before proves nothing (two absent answers again)', async () => {
    const { source, topics, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('gone', 1)
    source.addTopic('secret', 1)
    source.addTopic('kept', 1)
    source.denyDescribeConfigs('secret')
    await refresh()
    assert.deepEqual(topics.problems.map(p => p.topic), ['secret'])
    source.removeTopic('gone')
    assert.deepEqual((await refresh()).deleted, [])
    // When the job leaves
    topics.released()
    assert.equal(topics.problems.length, 0)
    // and comes back
    topics.acquired()
    // Then one more absent answer is not enough: counted again from it
    assert.deepEqual((await refresh()).deleted, [])
    assert.deepEqual((await refresh()).deleted, ['gone'])
    assert.deepEqual(topics.problems.map(p => p.topic), ['secret'])
  })

  it('Given the refresh job came back to this instance before its stop was told (released comes late), then its first refresh still counts absences from zero, and the late stop drops none it counted', async () => {
    const { source, topics, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('gone', 1)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    assert.deepEqual((await refresh()).deleted, [])
    // When the job comes back with its stop not told yet
    topics.acquired()
    assert.deepEqual((await refresh()).deleted, [])
    // and the stop is told only now
    topics.released()
    // Then the absence counted since the job came back stays counted
    assert.deepEqual((await refresh()).deleted, ['gone'])
  })
})

describe('RemoteTopics: problems across the refresh made while joining and the first stay of the job', () => {
  it('Given a problem told by the refresh made while joining, when the job comes to this instance (its first stay), then its first refresh shows it and does not tell it again', async () => {
    const { source, logs, topics, refresh } = setup()
    source.addTopic('secret', 1)
    source.denyDescribeConfigs('secret')
    await refresh()
    topics.acquired()
    await refresh()
    assert.deepEqual(topics.problems.map(p => p.topic), ['secret'])
    assert.equal(logs.at(LogLevels.error).filter(l => String(l.msg).startsWith('source topic secret on A is not replicated yet')).length, 1)
  })
})

describe('RemoteTopics: a topic found deleted, across stays of the refresh job', () => {
  it('Given a topic this instance found deleted before the job left, when the job comes back and the topic is back, then it is not returned (another instance may copy it since: its positions are not forgotten under them), and a leader that does not run the refresh lists it meanwhile', async () => {
    const { source, topics, refresh } = setup()
    source.addTopic('gone', 2)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    await refresh()
    assert.deepEqual((await refresh()).deleted, ['gone'])
    // When the job leaves, the topic comes back, and this instance (the group's leader) lists the work
    topics.released()
    source.addTopic('gone', 2)
    assert.deepEqual((await topics.replicable()).map(t => t.source), ['gone', 'kept'], 'not held out for good on a stale finding')
    // and the job comes back
    topics.acquired()
    const back = await refresh()
    // Then it is replicated, not returned
    assert.deepEqual(back.returned, [])
    assert.deepEqual(back.topics.map(t => t.source), ['gone', 'kept'])
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['gone', 'kept'])
  })
})

describe('RemoteTopics.refresh', () => {
  it('sets aside a topic whose source configs are refused, replicates the others, and creates it once they can be read', async () => {
    // Given DESCRIBE_CONFIGS on `secret` is refused on the source
    const { source, target, logs, topics, refresh } = setup()
    source.addTopic('orders', 2, { 'retention.ms': '3600000' })
    source.addTopic('secret', 1, { 'retention.ms': '7200000' })
    source.denyDescribeConfigs('secret')

    // When the topics are refreshed twice
    const first = await refresh()
    await refresh()

    // Then `orders` is created and replicated; `secret` is not created, counted, and logged once with the grant
    assert.deepEqual(first.topics.map(t => t.source), ['orders'])
    assert.deepEqual(first.created, ['A.orders'])
    assert.equal(target.has('A.secret'), false)
    // (and /status lists it, with the same message as the log: the gauge counts what /status shows, gauges.ts)
    assert.deepEqual(topics.problems.map(p => [p.topic, p.remoteTopic]), [['secret', 'A.secret']])
    const errors = logs.lines.filter(e => e.level >= LogLevels.warn)
    assert.equal(errors.length, 1)
    assert.equal(topics.problems[0]!.message, errors[0]!.msg)
    assert.match(errors[0]!.msg, /source topic secret on A is not replicated yet: .*grant DESCRIBE_CONFIGS on topic secret.*its remote topic A\.secret on B is not created without the source's configs/i)

    // When the grant is given
    source.denyDescribeConfigs('secret', false)
    const granted = await refresh()

    // Then `secret` joins with its configs
    assert.deepEqual(granted.created, ['A.secret'])
    assert.deepEqual(target.overrides('A.secret'), { 'retention.ms': '7200000' })
    assert.deepEqual(granted.topics.map(t => t.source), ['orders', 'secret'])
    assert.deepEqual(topics.problems, [])
  })

  it('creates missing remote topics with the source partitions and configs, and counts them', async () => {
    const { source, target, metrics, refresh } = setup()
    source.addTopic('orders', 3, { 'retention.ms': '3600000', 'cleanup.policy': 'compact', 'min.insync.replicas': '2' })
    const result = await refresh()
    assert.deepEqual(result.topics, [{ source: 'orders', remote: 'A.orders', partitions: 3 }])
    assert.deepEqual(result.created, ['A.orders'])
    assert.equal(target.partitions('A.orders'), 3)
    assert.deepEqual(target.overrides('A.orders'), { 'retention.ms': '3600000', 'cleanup.policy': 'compact' })
    assert.equal(metrics.counters.get('remoteTopicsCreated'), 1)
    assert.deepEqual(result.problems, [])
  })

  it('picks up a new topic and new partitions at the next refresh, reading configs only of the topic it creates', async () => {
    const { source, target, refresh } = setup()
    source.addTopic('a', 1)
    await refresh()
    source.addTopic('b', 2)
    source.growTopic('a', 4)
    const callsBefore = source.callsOf('describeTopicConfigs').length
    const result = await refresh()
    assert.deepEqual(source.callsOf('describeTopicConfigs').slice(callsBefore).map(c => c.topics), [['b']])
    assert.deepEqual(result.grown, ['A.a'])
    assert.deepEqual(result.removed, [])
    assert.equal(target.partitions('A.a'), 4)
    assert.deepEqual(result.topics.map(t => [t.source, t.partitions]), [['a', 4], ['b', 2]])
  })

  it('Given a remote topic whose configs drifted from its source, then the refresh changes no config and has no problem: configs are the config sync job\'s', async () => {
    const { source, target, topics, refresh } = setup('sync.topic.configs.enabled = true')
    source.addTopic('orders', 1, { 'retention.ms': '3600000' })
    await refresh()
    source.setOverride('orders', 'retention.ms', '7200000')
    target.failAlways('alterTopicConfigs', 'A.orders', new Error('ALTER_CONFIGS refused'))
    const result = await refresh()
    assert.deepEqual(target.callsOf('alterTopicConfigs'), [])
    assert.deepEqual([result.problems, topics.problems], [[], []])
    assert.deepEqual(target.overrides('A.orders'), { 'retention.ms': '3600000' })
  })

  it('reports a deleted source topic once (warn log naming it, metric), releases it, and keeps its remote topic', async () => {
    const { source, target, logs, metrics, released, refresh } = setup()
    source.addTopic('gone', 2)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    // The first refresh that finds it gone is no proof yet
    const first = await refresh()
    assert.deepEqual([first.deleted, first.removed], [[], []])
    assert.deepEqual(first.topics.map(t => t.source), ['gone', 'kept'])
    const result = await refresh()
    assert.deepEqual(result.deleted, ['gone'])
    assert.deepEqual(result.removed, ['gone'])
    assert.deepEqual(released, [['gone']])
    assert.equal(target.has('A.gone'), true)
    assert.equal(metrics.counters.get('sourceTopicsDeleted'), 1)
    const warning = logs.at(LogLevels.warn).find(l => l.topic === 'gone')
    assert.match(warning!.msg, /source topic gone was deleted; its remote topic A\.gone is kept \(set sync\.topic\.deletions\.enabled = true/)
    // Then nothing more is reported
    const again = await refresh()
    assert.deepEqual([again.deleted, again.removed], [[], []])
    assert.equal(metrics.counters.get('sourceTopicsDeleted'), 1)
    assert.deepEqual(again.topics.map(t => t.source), ['kept'])
  })

  it('Given most replicated topics absent at once (a broker with an empty cache, another cluster), then nothing is deleted or released for 12 refreshes, and one warning names the cause and the key to check', async () => {
    const { source, target, logs, released, refresh } = setup('sync.topic.deletions.enabled = true')
    for (const name of ['a', 'b', 'c']) source.addTopic(name, 1)
    source.addTopic('d', 1)
    await refresh()
    for (const name of ['a', 'b', 'c']) source.removeTopic(name)
    for (let i = 1; i < 12; i++) {
      const result = await refresh()
      assert.deepEqual([result.deleted, result.removed], [[], []], `refresh ${i}`)
    }
    assert.deepEqual(released, [])
    assert.equal(target.has('A.a'), true)
    const warnings = logs.at(LogLevels.warn).filter(l => /answers that 3 of the 4 topics/.test(l.msg))
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]!.msg, /^cluster A answers that 3 of the 4 topics A->B replicates do not exist: kmirror takes them as deleted only if they stay absent for 12 refreshes in a row, .*check that A\.bootstrap\.servers names the brokers of cluster A$/)
    // A real mass deletion is taken at the twelfth refresh: released, but no remote topic is deleted (another cluster
    // reached for good looks the same), and one error line says so, with how to delete them by hand
    const twelfth = await refresh()
    assert.deepEqual(twelfth.deleted, ['a', 'b', 'c'])
    assert.deepEqual(twelfth.removed, ['a', 'b', 'c'])
    assert.deepEqual(twelfth.deletedRemotes, [])
    assert.deepEqual(['A.a', 'A.b', 'A.c'].map(t => target.has(t)), [true, true, true])
    assert.deepEqual(target.callsOf('deleteTopics'), [])
    const errors = logs.at(LogLevels.error)
    assert.equal(errors.length, 1)
    assert.deepEqual(errors[0]!.remoteTopics, ['A.a', 'A.b', 'A.c'])
    assert.equal(errors[0]!.msg, '3 source topics of A->B counted as deleted on cluster A while most replicated topics were absent at once: released, ' +
      'but their remote topics on cluster B (A.a, A.b, A.c) are kept on purpose though sync.topic.deletions.enabled = true, because ' +
      'A.bootstrap.servers reaching another cluster looks the same, for good; check that A.bootstrap.servers names the brokers of cluster A, ' +
      'and if the topics were really deleted there, delete each remote topic by hand: kafka-topics.sh --bootstrap-server b:9092 --delete --topic REMOTE_TOPIC')
    assert.ok(logs.at(LogLevels.warn).some(l => l.topic === 'a' && /its remote topic A\.a is kept on purpose/.test(l.msg)))
  })

  it('Given 4 topics all absent at one refresh and 2 of them at the next (no more than half), then those 2 are not deleted at their second absence, and once proven their remote topics are kept', async () => {
    const { source, target, released, refresh } = setup('sync.topic.deletions.enabled = true')
    for (const name of ['a', 'b', 'c', 'd']) source.addTopic(name, 1)
    await refresh()
    const restores = ['a', 'b', 'c', 'd'].map(name => source.hideTopic(name))
    await refresh()
    restores[2]!()
    restores[3]!()
    for (let i = 2; i < 12; i++) {
      const result = await refresh()
      assert.deepEqual([result.deleted, result.removed], [[], []], `refresh ${i}`)
    }
    assert.deepEqual(released, [])
    const twelfth = await refresh()
    assert.deepEqual([twelfth.deleted, twelfth.deletedRemotes], [['a', 'b'], []])
    assert.deepEqual([target.has('A.a'), target.has('A.b')], [true, true])
  })

  it('names a source topic back after a refresh found it deleted as returned, with a warning, until handled: its stored positions are to be forgotten', async () => {
    const { source, logs, topics, refresh } = setup()
    source.addTopic('gone', 2)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    await refresh()
    assert.deepEqual((await refresh()).deleted, ['gone'])
    assert.deepEqual((await refresh()).returned, [])
    // When it is created again, a group leader listing the work from its last refresh does not list it before a
    // refresh handled it; a leader that does not run the refresh lists it (what this instance found deleted is no
    // proof there: the partitions' first fetch tells a deleted topic's stored positions by its id, invariant 46)
    source.addTopic('gone', 3)
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['kept'])
    assert.deepEqual((await topics.replicable()).map(t => t.source), ['gone', 'kept'])
    const back = await refresh()
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['kept'])
    assert.deepEqual(back.returned, [{ source: 'gone', remote: 'A.gone', partitions: 3 }])
    assert.deepEqual(back.topics.map(t => t.source), ['gone', 'kept'])
    // and again until handled (its stored positions forgotten), then no more; told once, when handled
    const told = (): number => logs.at(LogLevels.warn).filter(l => l.msg === 'source topic gone was deleted on cluster A and is back: a new topic, copied from its log start into A.gone (the stored positions of the deleted topic are forgotten)').length
    assert.deepEqual((await refresh()).returned.map(t => t.source), ['gone'])
    assert.equal(told(), 0, 'not told before it is handled')
    topics.returnedHandled(back.returned)
    assert.equal(told(), 1)
    assert.deepEqual((await refresh()).returned, [], 'once handled')
    assert.equal(told(), 1)
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['gone', 'kept'])
  })

  it('Given a topic counted as deleted that is back with the topic id it had (stale metadata), then it is not returned: its stored positions stay, and a warning says it was never deleted', async () => {
    const { source, logs, topics, refresh } = setup()
    source.addTopic('flaky', 2)
    source.addTopic('kept', 1)
    await refresh()
    const restore = source.hideTopic('flaky')
    await refresh()
    assert.deepEqual((await refresh()).deleted, ['flaky'])
    restore()
    const back = await refresh()
    assert.deepEqual(back.returned, [])
    assert.deepEqual(back.topics.map(t => t.source), ['flaky', 'kept'])
    assert.deepEqual((await topics.replicable()).map(t => t.source), ['flaky', 'kept'])
    assert.ok(logs.at(LogLevels.warn).some(l => /^source topic flaky on A, counted as deleted, is back with the same topic id id-\d+: it was never deleted .*copied on into A\.flaky from its stored positions$/.test(l.msg)))
  })

  it('Given a topic counted as deleted whose remote topic was deleted for it (sync.topic.deletions.enabled), when it is back with the topic id it had, then it is returned: copied again from its log start into the remote topic created again, never on from its stored positions', async () => {
    // Given `flaky` hidden by stale metadata long enough to count as deleted, its remote topic deleted with it
    const { source, target, logs, topics, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('flaky', 2)
    source.addTopic('kept', 1)
    await refresh()
    const restore = source.hideTopic('flaky')
    await refresh()
    const deleted = await refresh()
    assert.deepEqual([deleted.deleted, deleted.deletedRemotes], [['flaky'], ['A.flaky']])
    assert.equal(target.has('A.flaky'), false)
    // When it is back, id and all
    restore()
    const back = await refresh()
    // Then the refresh creates its remote topic again, and returns it: its stored positions are to be forgotten
    assert.deepEqual(back.created, ['A.flaky'])
    assert.deepEqual(back.returned, [{ source: 'flaky', remote: 'A.flaky', partitions: 2 }])
    assert.deepEqual(back.topics.map(t => t.source), ['flaky', 'kept'])
    assert.equal(logs.at(LogLevels.warn).some(l => /copied on into A\.flaky from its stored positions/.test(l.msg)), false)
    // and until handled, not listed by a group leader that runs the refresh meanwhile
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['kept'])
    topics.returnedHandled(back.returned)
    assert.ok(logs.at(LogLevels.warn).some(l => /^source topic flaky on A, counted as deleted, is back with the same topic id id-\d+: it was never deleted .*but its remote topic A\.flaky on B was deleted for it \(sync\.topic\.deletions\.enabled\) and is created again empty: it is copied again from its log start into A\.flaky \(its stored positions are forgotten\)$/.test(l.msg)))
    assert.deepEqual((await refresh()).returned, [])
  })

  it('Given a topic counted as deleted whose remote topic the target refused to delete, when it is back with the topic id it had, then it is copied on from its stored positions (its remote topic still holds every record), not again from its log start; after a deletion that timed out (it may have gone through), again from its log start', async () => {
    for (const [error, kafkaErrors, returned] of [['refused', ['TOPIC_AUTHORIZATION_FAILED'], false], ['timed out', ['REQUEST_TIMED_OUT'], true], ['no answer', [], true]] as const) {
      const { source, target, logs, refresh } = setup('sync.topic.deletions.enabled = true')
      source.addTopic('flaky', 2)
      source.addTopic('kept', 1)
      await refresh()
      const restore = source.hideTopic('flaky')
      await refresh()
      target.failNext('deleteTopics', 'A.flaky', new KmirrorError(ErrorCodes.NOT_AUTHORIZED, `deleting topic A.flaky on cluster B: ${error}`, { details: { kafkaErrors: [...kafkaErrors] } }))
      assert.deepEqual((await refresh()).deleted, ['flaky'], error)
      restore()
      const back = await refresh()
      assert.deepEqual(back.returned.map(t => t.source), returned ? ['flaky'] : [], error)
      assert.equal(logs.at(LogLevels.warn).some(l => /copied on into A\.flaky from its stored positions$/.test(l.msg)), !returned, error)
    }
  })

  it('with sync.topic.deletions.enabled, deletes the remote topic only after the data path released it', async () => {
    const { source, target, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('gone', 1)
    await refresh()
    source.removeTopic('gone')
    assert.deepEqual((await refresh()).deletedRemotes, [])
    assert.equal(target.has('A.gone'), true)
    const result = await refresh()
    assert.deepEqual(result.deletedRemotes, ['A.gone'])
    assert.equal(target.has('A.gone'), false)
    const order = target.calls.filter(c => c.op === 'stopReplicating' || c.op === 'deleteTopics').map(c => c.op)
    assert.deepEqual(order, ['stopReplicating', 'deleteTopics'])
  })

  it('Given sync.topic.deletions.enabled, when the target refuses to delete the remote topic of a deleted source topic, then one error line names it, the cluster, the Kafka error and how to delete it by hand, and it is no remote topic problem (not in problems nor the gauge, no "solved" line)', async () => {
    // Given `gone` replicated, then deleted on the source, and DELETE on A.gone not granted on the target
    const { source, target, logs, topics, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('gone', 1)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    await refresh()
    target.failNext('deleteTopics', 'A.gone', new KmirrorError(ErrorCodes.NOT_AUTHORIZED,
      'deleting topic A.gone on cluster B was refused (TOPIC_AUTHORIZATION_FAILED): grant DELETE on topic A.gone to User:kmirror on cluster B', { details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } }))
    // When the refresh that proves the deletion cannot delete A.gone
    const result = await refresh()
    // Then the deletion is reported, A.gone stays, and one error line says what to do
    assert.deepEqual([result.deleted, result.deletedRemotes, result.problems], [['gone'], [], []])
    assert.equal(target.has('A.gone'), true)
    const errors = logs.at(LogLevels.error)
    assert.equal(errors.length, 1)
    assert.deepEqual([errors[0]!.topic, errors[0]!.remoteTopic, errors[0]!.cluster, errors[0]!.kafkaError], ['gone', 'A.gone', 'B', 'TOPIC_AUTHORIZATION_FAILED'])
    assert.equal(errors[0]!.msg, 'source topic gone was deleted on cluster A, but its remote topic A.gone on cluster B could not be deleted (sync.topic.deletions.enabled): ' +
      'deleting topic A.gone on cluster B was refused (TOPIC_AUTHORIZATION_FAILED): grant DELETE on topic A.gone to User:kmirror on cluster B. ' +
      'Nothing is copied into it any more, and kmirror does not try again: delete it by hand, as a principal allowed DELETE on topic A.gone on cluster B: ' +
      'kafka-topics.sh --bootstrap-server b:9092 --delete --topic A.gone')
    // And it is no problem of a topic copied: /status, /healthz and the gauge stay clear, now and after
    assert.deepEqual(topics.problems, [])
    const after = await refresh()
    assert.deepEqual([after.deleted, after.problems], [[], []])
    assert.equal(logs.at(LogLevels.error).length, 1)
    assert.equal(logs.lines.some(l => l.msg === 'remote topic problem solved'), false)
  })

  it('keeps a source topic it may no longer describe, with its remote topic, and warns once naming the ACL to grant', async () => {
    const { source, target, logs, metrics, released, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('denied', 2)
    source.addTopic('other', 1)
    await refresh()
    // When DESCRIBE on denied is denied to kmirror's principal, for many refreshes
    source.denyDescribe('denied')
    for (let i = 0; i < 3; i++) {
      const result = await refresh()
      assert.deepEqual([result.deleted, result.removed, result.deletedRemotes], [[], [], []])
      assert.deepEqual(result.topics, [{ source: 'denied', remote: 'A.denied', partitions: 2 }, { source: 'other', remote: 'A.other', partitions: 1 }])
    }
    assert.equal(target.has('A.denied'), true)
    assert.deepEqual(released, [])
    assert.equal(metrics.counters.get('sourceTopicsDeleted'), undefined)
    const warnings = logs.at(LogLevels.warn).filter(l => l.topic === 'denied')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]!.msg, 'source topic denied on A can no longer be described by kmirror (TOPIC_AUTHORIZATION_FAILED): it is not taken as deleted: ' +
      'it stays in the flow and its remote topic A.denied on B is kept. Fix: grant the principal of A\'s client settings ALLOW DESCRIBE and READ on TOPIC denied on A ' +
      '(or leave it out with A->B.topics.exclude)')
    // When DESCRIBE is granted again, it is said once
    source.denyDescribe('denied', false)
    await refresh()
    assert.ok(logs.at(LogLevels.info).some(l => l.topic === 'denied' && l.msg === 'source topic denied on A can be described again'))
  })

  it('counts a deletion only after two consecutive refreshes found the topic absent; an authorization error in between starts again', async () => {
    const { source, target, refresh } = setup('sync.topic.deletions.enabled = true')
    source.addTopic('t', 1)
    await refresh()
    source.denyDescribe('t')
    source.removeTopic('t')
    assert.deepEqual((await refresh()).deleted, []) // unauthorized
    source.denyDescribe('t', false)
    assert.deepEqual((await refresh()).deleted, []) // absent once
    source.denyDescribe('t')
    assert.deepEqual((await refresh()).deleted, []) // unauthorized again: the count starts over
    source.denyDescribe('t', false)
    assert.deepEqual((await refresh()).deleted, []) // absent once
    const result = await refresh() // absent twice
    assert.deepEqual([result.deleted, result.deletedRemotes], [['t'], ['A.t']])
    assert.equal(target.has('A.t'), false)
  })

  it('replicates a remote topic with more partitions than its source into the source\'s partitions, warning once, and never releases it', async () => {
    // Given a remote topic with more partitions than its source (pre-created for a migration)
    const { source, target, logs, released, refresh } = setup()
    source.addTopic('clash', 2)
    source.addTopic('fine', 1)
    target.addTopic('A.clash', 4)
    // When the topics are refreshed twice
    const first = await refresh()
    const second = await refresh()
    // Then both topics are replicated, `clash` with its 2 source partitions, and one warning names both counts
    assert.deepEqual(first.topics, [{ source: 'clash', remote: 'A.clash', partitions: 2 }, { source: 'fine', remote: 'A.fine', partitions: 1 }])
    assert.deepEqual(second.topics, first.topics)
    assert.deepEqual([first.removed, second.removed, released], [[], [], []])
    assert.deepEqual([first.problems, logs.at(LogLevels.error)], [[], []])
    const warnings = logs.at(LogLevels.warn).filter(l => l.topic === 'clash')
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]!.msg, /remote topic A\.clash on B has 4 partitions but source topic clash on A has 2: partitions 0-1 are replicated, .* and partitions 2-3 of A\.clash receive nothing/)
    assert.equal(target.partitions('A.clash'), 4, 'never shrunk')
  })

  it('keeps replicating a topic whose source is deleted and created again with fewer partitions than its remote topic', async () => {
    // Given `orders` replicated with 12 partitions
    const { source, released, logs, refresh } = setup()
    source.addTopic('orders', 12)
    await refresh()
    // When it is deleted and created again with 6 between two refreshes
    source.removeTopic('orders')
    source.addTopic('orders', 6)
    const result = await refresh()
    // Then partitions 0-5 are replicated (the data path restarts each from the new topic's start), nothing is released
    assert.deepEqual(result.topics, [{ source: 'orders', remote: 'A.orders', partitions: 6 }])
    assert.deepEqual([result.removed, released], [[], []])
    assert.ok(logs.at(LogLevels.warn).some(l => l.topic === 'orders' && /has 12 partitions but source topic orders on A has 6/.test(l.msg)))
  })

  it('keeps the partition count of a grown source topic that a broker behind its growth reads smaller: nothing released, no warning', async () => {
    // Given `t` grown from 3 to 6 partitions and replicated with 6
    const { source, target, logs, released, refresh } = setup()
    source.addTopic('t', 3)
    await refresh()
    source.growTopic('t', 6)
    assert.deepEqual((await refresh()).topics, [{ source: 't', remote: 'A.t', partitions: 6 }])
    // When the next refreshes ask a broker that still has 3
    source.lagPartitions('t', 3)
    const lagging = [await refresh(), await refresh()]
    // Then `t` stays replicated with its 6 partitions (same topic id: Kafka never removes partitions)
    for (const r of lagging) assert.deepEqual([r.topics, r.removed], [[{ source: 't', remote: 'A.t', partitions: 6 }], []])
    assert.deepEqual(released, [])
    assert.deepEqual(logs.at(LogLevels.warn), [])
    assert.equal(target.partitions('A.t'), 6)
  })

  it('without topic ids, believes a source topic read with fewer partitions only at the second refresh in a row', async () => {
    // Given a source before Kafka 2.8 and `t` replicated with 6 partitions
    const { source, refresh } = setup()
    source.withoutTopicIds = true
    source.addTopic('t', 6)
    await refresh()
    // When one refresh reads 3 (a lagging broker), then 6 again
    source.lagPartitions('t', 3)
    assert.equal((await refresh()).topics[0]!.partitions, 6)
    source.lagPartitions('t', null)
    assert.equal((await refresh()).topics[0]!.partitions, 6)
    // When it is created again with 3 (unseen without ids): the first refresh holds 6, the second believes 3
    source.removeTopic('t')
    source.addTopic('t', 3)
    assert.equal((await refresh()).topics[0]!.partitions, 6)
    assert.equal((await refresh()).topics[0]!.partitions, 3)
  })

  it('keeps a source topic deleted and created again between two refreshes in the data path (its owners restart it when a fetch answer carries the new topic id), and reports it', async () => {
    const { source, logs, released, refresh } = setup()
    source.addTopic('t', 2)
    await refresh()
    source.removeTopic('t')
    source.addTopic('t', 2)
    const result = await refresh()
    assert.deepEqual(result.removed, [])
    assert.deepEqual(released, [])
    assert.deepEqual(result.topics, [{ source: 't', remote: 'A.t', partitions: 2 }])
    assert.ok(logs.at(LogLevels.warn).some(l => l.topic === 't' && /created again/.test(l.msg)))
  })

  it('keeps going when one creation is refused: that topic is a problem, the others are created, and it is retried', async () => {
    const { source, target, logs, refresh } = setup()
    source.addTopic('bad', 1)
    source.addTopic('good', 1)
    target.failNext('createTopic', 'A.bad', new Error('policy refused it'))
    const first = await refresh()
    assert.deepEqual(first.topics.map(t => t.source), ['good'])
    assert.deepEqual(first.problems.map(p => [p.topic, p.message]), [['bad', 'policy refused it']])
    assert.equal(logs.at(LogLevels.error).length, 1)
    const second = await refresh()
    assert.deepEqual(second.topics.map(t => t.source), ['bad', 'good'])
  })

  it('keeps replicating the existing partitions when growing the remote topic fails', async () => {
    const { source, target, refresh } = setup()
    source.addTopic('t', 2)
    await refresh()
    source.growTopic('t', 5)
    target.failNext('createPartitions', 'A.t', new Error('timed out'))
    const result = await refresh()
    assert.deepEqual(result.topics, [{ source: 't', remote: 'A.t', partitions: 2 }])
    assert.match(result.problems[0]!.message, /cannot grow to 5 partitions: timed out/)
  })

  it('grows a remote topic by at most 8,000 partitions a request (a KRaft controller refuses more than 10,000 records in one); a step refused keeps the partitions of the steps taken', async () => {
    const { source, target, refresh } = setup()
    source.addTopic('t', 2)
    await refresh()
    source.growTopic('t', 20_002)
    const grown = await refresh()
    assert.deepEqual(target.callsOf('createPartitions').map(c => c.detail), [8_002, 16_002, 20_002])
    assert.deepEqual([grown.topics, grown.problems], [[{ source: 't', remote: 'A.t', partitions: 20_002 }], []])

    // And when the second step of the next growth is refused, the first step's partitions are replicated
    source.growTopic('t', 40_002)
    const grow = target.createPartitions.bind(target)
    let steps = 0
    target.createPartitions = async (name: string, count: number) => { if (++steps === 2) throw new Error('timed out'); await grow(name, count) }
    const partly = await refresh()
    assert.deepEqual(partly.topics, [{ source: 't', remote: 'A.t', partitions: 28_002 }])
    assert.match(partly.problems[0]!.message, /cannot grow to 40002 partitions \(grown to 28002 so far\): timed out/)
  })

  it('does not replicate a topic whose remote topic someone else created meanwhile until the next refresh has looked at it', async () => {
    const { source, target, metrics, refresh } = setup()
    source.addTopic('t', 3)
    target.raceCreate('A.t', 5)
    const first = await refresh()
    assert.deepEqual([first.topics, first.created, first.problems], [[], [], []])
    assert.equal(metrics.counters.get('remoteTopicsCreated'), undefined)
    // Then the next refresh replicates it into the 3 partitions the source has, with a warning
    const second = await refresh()
    assert.deepEqual([second.topics, second.problems], [[{ source: 't', remote: 'A.t', partitions: 3 }], []])
  })
})
