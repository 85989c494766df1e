/**
 * A topic refresh whose run is aborted (its group membership ended, or the job was revoked: runtime/scheduler.ts)
 * writes nothing more on the target: no deletion, creation or growth after the abort, even one the plan holds.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { RemoteTopics } from '../../../src/metadata/remote-topics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

const WRITES = ['deleteTopics', 'createTopic', 'createPartitions', 'alterTopicConfigs']

const flow = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
  'replication.factor = 1', 'sync.topic.deletions.enabled = true'].join('\n'), 'mm2.properties').flows.find(f => f.name === 'A->B')!

/**
 * A refresh with every kind of write due: `gone` deleted on the source (absent at two refreshes: its remote topic
 * is deleted), `new1` and `new2` to create, `grown` to grow from 2 to 4 partitions. Its writes, in order:
 * deleteTopics A.gone, createTopic A.new1, createTopic A.new2, createPartitions A.grown.
 */
async function refreshWithEveryWrite () {
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, memoryLogger().log)
  for (const name of ['gone', 'grown', 'kept']) source.addTopic(name, 2)
  await topics.refresh()
  source.removeTopic('gone')
  await topics.refresh()
  source.addTopic('new1', 1)
  source.addTopic('new2', 1)
  source.growTopic('grown', 4)
  target.calls.length = 0
  return { source, target, topics }
}

/** The writes the target received, as `op topic`. */
function writesOf (target: FakeTopicCluster): string[] {
  return target.calls.filter(c => WRITES.includes(c.op)).map(c => `${c.op} ${c.topics.join(',')}`)
}

/** Aborts CONTROLLER with REASON right after the target's first OP (the write went out; the next must not). */
function abortAfter (target: FakeTopicCluster, op: 'deleteTopics' | 'createTopic', controller: AbortController, reason: unknown): void {
  const write = target[op].bind(target) as (...args: unknown[]) => Promise<unknown>
  Object.assign(target, {
    [op]: async (...args: unknown[]) => {
      const out = await write(...args)
      controller.abort(reason)
      return out
    }
  })
}

const lost = (): KmirrorError => new KmirrorError(ErrorCodes.FENCED, 'job refresh-topics stopped: the group membership that owned it ended', { retriable: true })

describe('RemoteTopics.refresh with its run aborted', () => {
  it('Given a refresh that deletes, creates and grows, when its run is not aborted, then every write goes out in that order (the baseline of the cases below)', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    await topics.refresh({ signal: new AbortController().signal })
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1', 'createTopic A.new2', 'createPartitions A.grown'])
  })

  it('Given a refresh that deletes, creates and grows, when its run is aborted right after the deletion, then nothing is created or grown and the refresh rejects with the abort\'s reason', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'deleteTopics', run, reason)
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone'])
    assert.equal(target.has('A.new1'), false)
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a refresh that creates two remote topics, when its run is aborted after the first creation, then the second is never created and nothing is grown', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'createTopic', run, reason)
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1'])
    assert.equal(target.has('A.new2'), false)
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a refresh that creates topics together (CreateTopics), when its run is aborted after that request, then nothing is grown', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    // The target creates the two new topics in one request (they share partitions, replication factor and configs)
    Object.assign(target, {
      createTopics: async (list: readonly { name: string, partitions: number, configs: Record<string, string> }[]) => {
        for (const t of list) await target.createTopic({ ...t, replicationFactor: 1, replicationFactorKey: 'replication.factor' })
        run.abort(reason)
      }
    })
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1', 'createTopic A.new2'])
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a run aborted while the refresh reads (before any write), then its reads finish and nothing at all is written, nor any topic released', async () => {
    const { source, target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    const describe = source.describeTopics.bind(source)
    source.describeTopics = async names => { run.abort(reason); return await describe(names) }
    const released: string[] = []
    await assert.rejects(topics.refresh({ signal: run.signal, stopReplicating: async names => { released.push(...names) } }), err => err === reason)
    assert.deepEqual(writesOf(target), [])
    assert.deepEqual(released, [])
  })
})
