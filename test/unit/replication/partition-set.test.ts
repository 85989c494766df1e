import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fetchPosition, PartitionSet, type PartitionDepartures, type PartitionRef } from '../../../src/replication/partition-set.ts'
import { FORGOTTEN } from '../../../src/replication/progress-store.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

const fetcher = {
  listOffsetsSettled: async (partitions: readonly { topic: string, partition: number }[]) =>
    ({ offsets: new Map(partitions.map(p => [partitionKey(p.topic, p.partition), 7])), failed: new Map<string, string>() })
}

async function setOf (refs: readonly PartitionRef[], departures: PartitionDepartures | null = null): Promise<PartitionSet> {
  const set = new PartitionSet(fetcher, 'latest', memoryLogger().log, departures)
  set.enqueue({ kind: 'add', states: (await set.resolve(refs)).states, done: () => undefined })
  set.applyChanges(() => undefined)
  return set
}

describe('PartitionSet', () => {
  it('finds a partition by topic and number, with its key made once; a removed topic is found no more', async () => {
    // Given two topics in the set
    const set = await setOf([{ topic: 'a', partition: 0, remoteTopic: 'A.a' }, { topic: 'a', partition: 1, remoteTopic: 'A.a' }, { topic: 'b', partition: 0, remoteTopic: 'A.b' }])

    // Then each is found by topic and partition, as by its key
    assert.equal(set.find('a', 1), set.get(partitionKey('a', 1)))
    assert.equal(set.find('a', 1)?.key, partitionKey('a', 1))
    assert.equal(set.find('a', 2), undefined)

    // When topic a is removed
    set.enqueue({ kind: 'remove-topics', topics: new Set(['a']), done: () => undefined })
    set.applyChanges(() => undefined)

    // Then its partitions are found neither way; b still is
    assert.equal(set.find('a', 0), undefined)
    assert.equal(set.get(partitionKey('a', 0)), undefined)
    assert.equal(set.find('b', 0)?.position, 7)
  })

  it('asks an idle partition at the same position object round after round, and a moved one at its new position', async () => {
    // Given a partition at position 7
    const set = await setOf([{ topic: 'a', partition: 0, remoteTopic: 'A.a' }])
    const state = set.find('a', 0)!
    const first = fetchPosition(state)
    assert.deepEqual(first, { topic: 'a', partition: 0, offset: 7 })

    // When it does not move, the next round asks the same object
    assert.equal(fetchPosition(state), first)

    // When it moves, the next round asks the new position, and the object of the old one is left as it was
    state.position = 12
    assert.deepEqual(fetchPosition(state), { topic: 'a', partition: 0, offset: 12 })
    assert.equal(first.offset, 7)
  })

  it('a partition added again after it was lost replaces its state in both lookups', async () => {
    // Given a partition lost (leaving at the end of the round)
    const ref = { topic: 'a', partition: 0, remoteTopic: 'A.a' }
    const set = await setOf([ref])
    set.find('a', 0)!.lost = true

    // When it is added again before it left
    const [fresh] = (await set.resolve([ref])).states
    set.enqueue({ kind: 'add', states: [fresh!], done: () => undefined })
    set.applyChanges(() => undefined)

    // Then the new state is the one found
    assert.equal(set.find('a', 0), fresh)
    assert.equal(set.get(partitionKey('a', 0)), fresh)
    assert.equal(set.size, 1)
  })

  it('never starts a partition at a made-up offset: one the answer left out, or failed, is unresolved with its error', async () => {
    // Given a source that answers t-0, fails t-1 and leaves t-2 out of its answer
    const partial = {
      listOffsetsSettled: async () => ({ offsets: new Map([[partitionKey('t', 0), 4]]), failed: new Map([[partitionKey('t', 1), 'LEADER_NOT_AVAILABLE']]) })
    }
    const set = new PartitionSet(partial, 'earliest', memoryLogger().log)
    set.setStored(new Map([[partitionKey('t', 3), 9]]))
    // When the four are resolved (t-3 has a stored position: the source is not asked for it)
    const { states, unresolved } = await set.resolve([0, 1, 2, 3].map(partition => ({ topic: 't', partition, remoteTopic: 'A.t' })))
    // Then t-0 starts at its answer, t-3 after its stored position, and t-1 and t-2 wait with their errors
    assert.deepEqual(states.map(s => [s.partition, s.position]), [[0, 4], [3, 10]])
    assert.deepEqual(unresolved.map(u => [u.ref.partition, u.error]), [[1, 'LEADER_NOT_AVAILABLE'], [2, 'UNKNOWN_SERVER_ERROR']])
  })

  it('starts a partition whose position was forgotten at the source\'s log start, whatever startAt says; a stored one after its position', async () => {
    // Given startAt latest, t-0 forgotten (its source topic came back), t-1 stored at 9, t-2 with nothing stored
    const asked: [string, number[]][] = []
    const source = {
      listOffsetsSettled: async (partitions: readonly { topic: string, partition: number }[], at: 'earliest' | 'latest') => {
        asked.push([at, partitions.map(p => p.partition)])
        return { offsets: new Map(partitions.map(p => [partitionKey(p.topic, p.partition), at === 'earliest' ? 2 : 50])), failed: new Map<string, string>() }
      }
    }
    const set = new PartitionSet(source, 'latest', memoryLogger().log, null, () => 'old-id')
    set.setStored(new Map([[partitionKey('t', 0), FORGOTTEN], [partitionKey('t', 1), 9]]))
    // When the three are resolved
    const { states } = await set.resolve([0, 1, 2].map(partition => ({ topic: 't', partition, remoteTopic: 'A.t' })))
    // Then t-0 starts at the log start (not resumed: no source topic id of an earlier copy), t-1 after its
    // position, t-2 at the log end
    assert.deepEqual(states.map(s => [s.partition, s.position, s.copiedFrom]), [[0, 2, undefined], [1, 10, 'old-id'], [2, 50, undefined]])
    assert.deepEqual(asked.sort(), [['earliest', [0]], ['latest', [2]]])
  })

  it('says a partition is taken while copied, not while it leaves', async () => {
    const ref = { topic: 'a', partition: 0, remoteTopic: 'A.a' }
    const set = await setOf([ref])
    assert.ok(set.taken(partitionKey('a', 0)))
    set.find('a', 0)!.releasing = true
    assert.ok(!set.taken(partitionKey('a', 0)))
  })

  it('tells each partition that leaves, whatever the change, and whether it was the last of its topic; a partition added again while leaving does not leave', async () => {
    // Given topics a (partitions 0, 1, 2) and b (0, 1), told to a listener
    const left: string[] = []
    const set = await setOf([0, 1, 2].map(partition => ({ topic: 'a', partition, remoteTopic: 'A.a' })).concat([0, 1].map(partition => ({ topic: 'b', partition, remoteTopic: 'A.b' }))),
      { partitionLeft: (topic, partition, last) => { left.push(`${topic}-${partition}${last ? ' last' : ''}`) } })

    // When a-0 is released, a-1 lost and added again before it left, a-2 lost, and topic b removed
    set.find('a', 0)!.releasing = true
    set.enqueue({ kind: 'release', keys: new Set([partitionKey('a', 0)]), done: () => undefined })
    set.find('a', 1)!.lost = true
    set.find('a', 2)!.lost = true
    set.enqueue({ kind: 'add', states: (await set.resolve([{ topic: 'a', partition: 1, remoteTopic: 'A.a' }])).states, done: () => undefined })
    set.enqueue({ kind: 'drop-lost', done: () => undefined })
    set.enqueue({ kind: 'remove-topics', topics: new Set(['b']), done: () => undefined })
    set.applyChanges(() => undefined)

    // Then every partition that left is told, b-1 as the last of b; a-1 stays, so a still has a partition here
    assert.deepEqual(left, ['a-0', 'a-2', 'b-0', 'b-1 last'])
    assert.ok(set.hasTopic('a'))
    assert.ok(!set.hasTopic('b'))

    // When a-1 leaves too, then it is told as the last of a
    set.find('a', 1)!.lost = true
    set.enqueue({ kind: 'drop-lost', done: () => undefined })
    set.applyChanges(() => undefined)
    assert.deepEqual(left.at(-1), 'a-1 last')
  })

  it('adds only the states an add admits when it is applied', async () => {
    const set = new PartitionSet(fetcher, 'latest', memoryLogger().log)
    const { states } = await set.resolve([0, 1].map(partition => ({ topic: 'a', partition, remoteTopic: 'A.a' })))
    set.enqueue({ kind: 'add', states, admit: s => s.partition === 1, done: () => undefined })
    set.applyChanges(() => undefined)
    assert.deepEqual([...set.values()].map(s => s.partition), [1])
  })
})
