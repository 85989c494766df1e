import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { clearSuspects } from '../../../src/kafka/broker-suspects.ts'
import { MetadataCache, type SendMetadata } from '../../../src/kafka/metadata-cache.ts'
import type { MetadataResponse } from '../../../src/kafka/protocol/metadata.ts'
import { clearSilences, markSilent } from '../../../src/kafka/silent-brokers.ts'

const BROKER_1 = { nodeId: 1, host: '127.0.0.1', port: 9101, rack: null }
const BROKER_2 = { nodeId: 2, host: '127.0.0.1', port: 9102, rack: null }

/** Returns once the clock has moved past the current millisecond (silences compare milliseconds). */
function nextMillisecond (): void {
  const now = Date.now()
  while (Date.now() === now) { /* at most a millisecond */ }
}

/** A cluster of brokers 1 and 2 whose answers name `leader` as the leader of every partition asked. */
function cluster (): { cache: MetadataCache, asked: () => number, lead: (id: number) => void, requests: string[][] } {
  let leader = 1
  let asked = 0
  const requests: string[][] = []
  const send: SendMetadata = async (_connection, topics) => {
    asked++
    requests.push([...topics])
    const response: MetadataResponse = {
      throttleTimeMs: 0, clusterId: 'fake', controllerId: 1,
      brokers: new Map([[1, BROKER_1], [2, BROKER_2]]),
      topics: new Map(topics.map(name => [name, { name, errorCode: name.startsWith('gone') ? 3 : 0, id: null, isInternal: false, partitions: [{ index: 0, errorCode: 0, leader, leaderEpoch: 0 }] }]))
    }
    return response
  }
  const connection = { host: BROKER_2.host, port: BROKER_2.port } as unknown as Connection
  const cache = new MetadataCache({ getFirstAvailable: async () => connection }, [BROKER_1], { label: 'cluster B' }, 300_000, send)
  return { cache, asked: () => asked, lead: id => { leader = id }, requests }
}

describe('MetadataCache', () => {
  afterEach(() => {
    clearSilences()
    clearSuspects()
  })

  it('Given leaders read a moment ago, then they are answered from the cache without asking the cluster', async () => {
    const { cache, asked } = cluster()
    await cache.leaders(['t'])
    const again = await cache.leaders(['t'])
    assert.equal(asked(), 1)
    assert.deepEqual(again.topics.get('t')?.leaders, [1])
  })

  it('Given a broker of the cluster fell silent after the leaders were read, then the next use reads them again (the cluster moved them)', async () => {
    const { cache, asked, lead } = cluster()
    assert.deepEqual((await cache.leaders(['t'])).topics.get('t')?.leaders, [1])
    // When broker 1 falls silent and the cluster moves its partitions to broker 2
    nextMillisecond()
    markSilent(BROKER_1, 'Heartbeat given up')
    lead(2)
    // Then the cache reads again, once
    assert.deepEqual((await cache.leaders(['t'])).topics.get('t')?.leaders, [2])
    await cache.leaders(['t'])
    assert.equal(asked(), 2)
  })

  it('Given a silence of a broker that is not in the cluster, then the cached leaders stay', async () => {
    const { cache, asked } = cluster()
    await cache.leaders(['t'])
    nextMillisecond()
    markSilent({ host: '127.0.0.1', port: 9999 }, 'timeout')
    await cache.leaders(['t'])
    assert.equal(asked(), 1)
  })

  it('Given topics to recheck, then each is read again alone once its time is up, and the others stay cached', async () => {
    const { cache, requests, lead } = cluster()
    await cache.leaders(['a', 'b', 'c'])
    // When b is to be rechecked at once and c in a minute
    cache.recheck(['b'], 0)
    cache.recheck(['c'], 60_000)
    lead(2)
    const read = await cache.leaders(['a', 'b', 'c'])
    // Then only b was asked, and its new leader is answered; a and c come from the cache
    assert.deepEqual(requests, [['a', 'b', 'c'], ['b']])
    assert.deepEqual(['a', 'b', 'c'].map(t => read.topics.get(t)?.leaders[0]), [1, 2, 1])
    // and b, read again, is cached for the usual time
    await cache.leaders(['a', 'b', 'c'])
    assert.equal(requests.length, 2)
  })

  it('Given a topic not cached yet, then only it is read, not the topics already cached', async () => {
    const { cache, requests } = cluster()
    await cache.leaders(['a'])
    await cache.leaders(['a', 'new'])
    assert.deepEqual(requests, [['a'], ['new']])
  })

  it('Given a topic the cluster does not have, then it is asked again at every use, alone, unless a recheck spaces the asks', async () => {
    const { cache, requests } = cluster()
    const first = await cache.leaders(['a', 'gone-1'])
    assert.deepEqual([...first.topics.keys()], ['a'])
    await cache.leaders(['a', 'gone-1'])
    cache.recheck(['gone-1'], 60_000)
    await cache.leaders(['a', 'gone-1'])
    await cache.leaders(['a', 'gone-1'])
    assert.deepEqual(requests, [['a', 'gone-1'], ['gone-1']])
  })

  it('Given a broker fell silent after the leaders were read, then a later recheck of one topic does not keep the others: every topic is read again', async () => {
    const { cache, requests } = cluster()
    await cache.leaders(['a', 'b'])
    nextMillisecond()
    markSilent(BROKER_1, 'Heartbeat given up')
    nextMillisecond()
    // When b alone is read again after the silence
    cache.recheck(['b'], 0)
    await cache.leaders(['a', 'b'])
    // Then a, read before the silence, is read again too (the recheck of b did not hide the silence)
    await cache.leaders(['a', 'b'])
    assert.deepEqual(requests.map(r => [...r].sort()), [['a', 'b'], ['a', 'b']])
  })
})
