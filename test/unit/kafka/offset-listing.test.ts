import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { LeaderMetadata } from '../../../src/kafka/metadata-cache.ts'
import { listOffsets, listOffsetsSettled, type OffsetListingDeps } from '../../../src/kafka/offset-listing.ts'
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../../src/kafka/protocol/list-offsets.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

const NOT_LEADER_OR_FOLLOWER = 6
const TOPIC_AUTHORIZATION_FAILED = 29

/** What each broker answers for a partition: an offset, a Kafka error code, or nothing (left out of the answer). */
type Answer = { offset: number } | { error: number } | 'left out'

interface Cluster {
  /** Leader per partition of topic `t` (-1: none); read at each metadata request. */
  leaders: number[]
  /** Per attempt (0-based) and partition: what its leader answers; the last attempt's answers repeat. */
  answers: Answer[][]
  /** Brokers whose connection fails. */
  down: Set<number>
}

function fixture (cluster: Cluster) {
  const asked: { broker: number, partitions: number[] }[] = []
  let invalidations = 0
  let attempt = -1
  let metadataReads = 0
  const deps: OffsetListingDeps = {
    metadata: {
      leaders: async (): Promise<LeaderMetadata> => {
        metadataReads++
        attempt++
        return {
          brokers: new Map([1, 2, 3].map(id => [id, { host: `b${id}`, port: 9092 }])),
          topics: new Map([['t', { id: null, leaders: [...cluster.leaders] }]]),
          refused: new Map()
        }
      },
      invalidate: () => { invalidations++ }
    },
    pool: { get: async () => { throw new Error('not used: send answers') } },
    cluster: { label: 'cluster A', alias: 'A' },
    isolationLevel: 0,
    send: async (broker, request: ListOffsetsRequest): Promise<ListOffsetsResponse> => {
      const id = Number(broker.host.slice(1))
      const partitions = request.topics.flatMap(t => t.partitions.map(p => p.partition))
      asked.push({ broker: id, partitions })
      if (cluster.down.has(id)) throw new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `connect to b${id}:9092 of cluster A: ECONNREFUSED`, { retriable: true })
      const answers = cluster.answers[Math.min(attempt, cluster.answers.length - 1)]!
      const out = partitions.flatMap(partition => {
        const answer = answers[partition]!
        if (answer === 'left out') return []
        return [{ partition, errorCode: 'error' in answer ? answer.error : 0, timestamp: -1n, offset: 'offset' in answer ? BigInt(answer.offset) : -1n, leaderEpoch: 0 }]
      })
      return { throttleTimeMs: 0, topics: [{ name: 't', partitions: out }] }
    }
  }
  return { deps, asked, invalidations: () => invalidations, metadataReads: () => metadataReads }
}

const tps = (...partitions: number[]) => partitions.map(partition => ({ topic: 't', partition }))
const key = (partition: number) => partitionKey('t', partition)
const offsets = (...values: number[]): Answer[] => values.map(offset => ({ offset }))

describe('listOffsetsSettled', () => {
  it('returns the offsets it got, and apart each partition without a leader (LEADER_NOT_AVAILABLE) or unknown to the cluster', async () => {
    // Given t-1 without a leader, and a t-5 the topic does not have
    const f = fixture({ leaders: [1, -1, 2], answers: [offsets(10, 11, 12)], down: new Set() })
    const settled = await listOffsetsSettled(f.deps, tps(0, 1, 2, 5), 'latest', 1)
    assert.deepEqual([...settled.offsets], [[key(0), 10], [key(2), 12]])
    assert.deepEqual([...settled.failed], [[key(1), 'LEADER_NOT_AVAILABLE'], [key(5), 'UNKNOWN_TOPIC_OR_PARTITION']])
    // Each leader asked once for its partitions only
    assert.deepEqual(f.asked.map(a => [a.broker, a.partitions]).sort(), [[1, [0]], [2, [2]]])
  })

  it('never gives a partition its leader left out of the answer an offset: UNKNOWN_SERVER_ERROR, not asked again', async () => {
    const f = fixture({ leaders: [1, 1], answers: [[{ offset: 3 }, 'left out']], down: new Set() })
    const settled = await listOffsetsSettled(f.deps, tps(0, 1), 'earliest')
    assert.deepEqual([...settled.offsets], [[key(0), 3]])
    assert.deepEqual([...settled.failed], [[key(1), 'UNKNOWN_SERVER_ERROR']])
    assert.equal(f.asked.length, 1)
  })

  it('asks again, with fresh metadata, only the partitions whose leader moved, until they answer', async () => {
    // Given t-1's leader answering NOT_LEADER_OR_FOLLOWER once (it moved to broker 2)
    const cluster: Cluster = { leaders: [1, 1], answers: [[{ offset: 5 }, { error: NOT_LEADER_OR_FOLLOWER }], offsets(5, 6)], down: new Set() }
    const f = fixture(cluster)
    const settled = await listOffsetsSettled(f.deps, tps(0, 1), 'latest')
    assert.deepEqual([...settled.offsets].sort(), [[key(0), 5], [key(1), 6]])
    assert.equal(settled.failed.size, 0)
    assert.deepEqual(f.asked.map(a => a.partitions), [[0, 1], [1]])
    assert.ok(f.invalidations() >= 1)
  })

  it('asks once when told to: the caller backs off itself', async () => {
    const f = fixture({ leaders: [1], answers: [[{ error: NOT_LEADER_OR_FOLLOWER }]], down: new Set() })
    const settled = await listOffsetsSettled(f.deps, tps(0), 'latest', 1)
    assert.deepEqual([...settled.failed], [[key(0), 'NOT_LEADER_OR_FOLLOWER']])
    assert.equal(f.asked.length, 1)
  })

  it('reports the partitions of a broker it cannot reach as NETWORK_EXCEPTION, the others answered', async () => {
    const f = fixture({ leaders: [1, 2], answers: [offsets(1, 2)], down: new Set([2]) })
    const settled = await listOffsetsSettled(f.deps, tps(0, 1), 'latest', 1)
    assert.deepEqual([...settled.offsets], [[key(0), 1]])
    assert.deepEqual([...settled.failed], [[key(1), 'NETWORK_EXCEPTION']])
  })
})

describe('listOffsets (all or nothing)', () => {
  it('throws for a partition without a leader, naming it, the cluster, the Kafka error and the fix', async () => {
    const f = fixture({ leaders: [1, -1], answers: [offsets(1, 2)], down: new Set() })
    const err = await listOffsets(f.deps, tps(0, 1), 'latest').then(() => null, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError)
    assert.match(err.message, /^list latest offsets of 1 partition\(s\) of cluster A, first t-1: Kafka error LEADER_NOT_AVAILABLE; .*elect a leader among its live replicas/)
    assert.equal(err.retriable, true)
    // Asked again before giving up: five metadata reads in all
    assert.equal(f.metadataReads(), 5)
  })

  it('throws the refusal for good first, without waiting out the retries of the others', async () => {
    const f = fixture({ leaders: [1, 1], answers: [[{ error: NOT_LEADER_OR_FOLLOWER }, { error: TOPIC_AUTHORIZATION_FAILED }], [{ offset: 4 }, { error: TOPIC_AUTHORIZATION_FAILED }]], down: new Set() })
    const err = await listOffsets(f.deps, tps(0, 1), 'earliest').then(() => null, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
    assert.match(err.message, /first t-1: Kafka error TOPIC_AUTHORIZATION_FAILED/)
    // t-1 was not asked again; t-0 was, and answered
    assert.deepEqual(f.asked.map(a => a.partitions), [[0, 1], [0]])
  })

  it('throws the connection error of a leader it cannot reach, not a bare NETWORK_EXCEPTION', async () => {
    const f = fixture({ leaders: [2], answers: [offsets(1)], down: new Set([2]) })
    const err = await listOffsets(f.deps, tps(0), { atOrAfter: 1_700_000_000_000 }).then(() => null, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.CLUSTER_UNREACHABLE)
    assert.match(err.message, /ECONNREFUSED/)
  })
})
