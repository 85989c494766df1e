/**
 * A read split by leader (fetch-rounds.ts), driven with a fake metadata cache and brokers whose fetches the test
 * answers: a late broker is left out and its answer used a round later at the same offsets only; a broker whose
 * fetch is out is sent nothing more and its topics' leaders are read again; a late failure is its outage; the
 * cluster down still fails the read.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { Broker } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { clearSuspects, suspectsLast } from '../../../src/kafka/broker-suspects.ts'
import { emptyBatches, FetchOutcomes, type FetchedBatches, type PartitionPosition } from '../../../src/kafka/fetch-results.ts'
import { FetchRounds, fetchFromLabel, LEADERLESS_RECHECK_MS, type ReadOptions } from '../../../src/kafka/fetch-rounds.ts'
import { onLeaderOutage, type LeaderOutageReport } from '../../../src/kafka/leader-outages.ts'
import type { LeaderMetadata, TopicLeaders } from '../../../src/kafka/metadata-cache.ts'
import { deferred, settle, type Deferred } from '../../fakes/deferred.ts'

const cluster = { label: 'cluster A', alias: 'A', protocol: 'PLAINTEXT' }
const how: ReadOptions = { partitionMaxBytes: 1 << 20, session: true }
const at = (topic: string, partition: number, offset: number): PartitionPosition => ({ topic, partition, offset })
const answer = (position: PartitionPosition, nextOffset: number): FetchedBatches => ({ ...emptyBatches(position, FetchOutcomes.OK), nextOffset, highWatermark: nextOffset })
const unreachable = (node: number, broker: Broker): KmirrorError =>
  new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `${fetchFromLabel(node, broker, cluster)}: connect ECONNREFUSED ${broker.host}:${broker.port}`, { retriable: true })

/** Topic `t` with partitions 0, 1, 2 led by brokers 1, 2, 3 (ports 19091-19093, unique to this file). */
class FakeCluster {
  readonly brokers = new Map<number, Broker>([1, 2, 3].map(n => [n, { host: '127.0.0.1', port: 19090 + n }]))
  leaders = [1, 2, 3]
  topicId: string | null = 'id-1'
  readonly rechecks: string[][] = []
  /** Each fetch sent, by broker: the positions asked and its answer, which the test gives. */
  readonly sent: { node: number, positions: PartitionPosition[], answer: Deferred<FetchedBatches[]> }[] = []

  metadata = {
    leaders: async (topics: readonly string[]): Promise<LeaderMetadata> => {
      const topicMap = new Map<string, TopicLeaders>(topics.map(t => [t, { id: this.topicId, leaders: this.leaders }]))
      return { brokers: this.brokers, topics: topicMap, refused: new Map() }
    },
    recheck: (topics: Iterable<string>, afterMs: number): void => {
      assert.equal(afterMs, LEADERLESS_RECHECK_MS)
      this.rechecks.push([...topics])
    },
    invalidate: (): void => {}
  }

  rounds (maxWaitMs = 0, throttledUntil = 0): FetchRounds {
    return new FetchRounds({
      throttledUntil: () => throttledUntil,
      metadata: this.metadata,
      cluster,
      maxWaitMs,
      partial: true,
      reader: 'A->B',
      fetchFrom: async (node, _broker, positions) => {
        const d = deferred<FetchedBatches[]>()
        this.sent.push({ node, positions, answer: d })
        return await d.promise
      },
      refused: position => emptyBatches(position, FetchOutcomes.FAILED)
    })
  }

  /** The fetches sent to NODE so far. */
  to (node: number): { positions: PartitionPosition[], answer: Deferred<FetchedBatches[]> }[] {
    return this.sent.filter(s => s.node === node)
  }

  /** Answers every fetch not answered yet except NODE's: each partition one record further. */
  answerAllBut (node: number): void {
    for (const s of this.sent) if (s.node !== node && !s.answer.settled) s.answer.resolve(s.positions.map(p => answer(p, p.offset + 1)))
  }
}

const byPartition = (results: readonly FetchedBatches[]): Map<number, FetchedBatches> => new Map(results.map(r => [r.partition, r]))

/** Awaits ROUND while ANSWER answers what it sends, every 5 ms (a round only returns once its fetches are answered or left). */
async function roundWith (round: Promise<FetchedBatches[]>, answer: () => void): Promise<FetchedBatches[]> {
  const timer = setInterval(answer, 5)
  try { return await round } finally { clearInterval(timer) }
}

describe('FetchRounds', () => {
  const stops: (() => void)[] = []
  afterEach(() => {
    for (const stop of stops.splice(0)) stop()
    clearSuspects()
  })

  it('leaves a late broker out once the others answered, sends it nothing more while its fetch is out, and reads its topics\' leaders again', async () => {
    const fake = new FakeCluster()
    const rounds = fake.rounds()
    // Given a round where brokers 1 and 2 answer and broker 3 does not
    const first = await roundWith(rounds.read([at('t', 0, 10), at('t', 1, 20), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    // Then the others' answers are kept and broker 3's partition comes back RETRY, unread, with why; from now on
    // its topic's leaders are read again soon, and it is asked last by Metadata
    assert.deepEqual(fake.rechecks, [['t']])
    assert.deepEqual(suspectsLast([3, 1, 2].map(n => fake.brokers.get(n)!)).map(b => b.port), [19091, 19092, 19093])
    const one = byPartition(first)
    assert.deepEqual([one.get(0)?.nextOffset, one.get(1)?.nextOffset], [11, 21])
    assert.equal(one.get(2)?.outcome, FetchOutcomes.RETRY)
    assert.equal(one.get(2)?.nextOffset, 30)
    assert.equal(one.get(2)?.retryReason?.error, 'REQUEST_TIMED_OUT')
    assert.match(one.get(2)?.retryReason?.detail ?? '', /broker 3 \(127\.0\.0\.1:19093\), has not answered a fetch sent [\d.]+ s ago/)
    // When the next round runs while its fetch is still out
    const second = await roundWith(rounds.read([at('t', 0, 11), at('t', 1, 21), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    // Then nothing more is sent to broker 3, its partition waits again, and its topic is read again soon
    assert.equal(fake.to(3).length, 1)
    assert.equal(byPartition(second).get(2)?.outcome, FetchOutcomes.RETRY)
    assert.deepEqual(fake.rechecks, [['t'], ['t']])
    fake.to(3)[0]!.answer.resolve([])
  })

  it('uses a late answer at the next round for the partitions asked again at the very offsets it was fetched from', async () => {
    const fake = new FakeCluster()
    fake.leaders = [1, 3, 3]
    const rounds = fake.rounds()
    await roundWith(rounds.read([at('t', 0, 10), at('t', 1, 20), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    // Given broker 3's late answer arrives: partition 1 from 20 to 25, partition 2 from 30 to 33
    fake.to(3)[0]!.answer.resolve([answer(at('t', 1, 20), 25), answer(at('t', 2, 30), 33)])
    await settle()
    // When the next round asks partition 1 at 20 (where it was) but partition 2 at 31 (moved meanwhile, say)
    const next = byPartition(await roundWith(rounds.read([at('t', 0, 11), at('t', 1, 20), at('t', 2, 31)], how), () => fake.answerAllBut(-1)))
    // Then partition 1 takes the late answer, and partition 2 is asked anew from 31: never the late answer's records
    assert.equal(next.get(1)?.nextOffset, 25)
    assert.equal(next.get(1)?.fromOffset, 20)
    assert.deepEqual(fake.to(3).map(s => s.positions), [[at('t', 1, 20), at('t', 2, 30)], [at('t', 2, 31)]])
    assert.equal(next.get(2)?.nextOffset, 32)
    assert.equal(next.get(2)?.fromOffset, 31)
    // and broker 3, which answered, is no longer asked last
    assert.deepEqual(suspectsLast([3, 1, 2].map(n => fake.brokers.get(n)!)).map(b => b.port), [19093, 19091, 19092])
  })

  it('neither suspects nor re-reads the leaders of a broker whose fetch kmirror holds for its quota throttle', async () => {
    const fake = new FakeCluster()
    const rounds = fake.rounds(0, Date.now() + 60_000)
    const first = byPartition(await roundWith(rounds.read([at('t', 0, 10), at('t', 2, 30)], how), () => fake.answerAllBut(3)))
    // Then its partition waits with that reason, not as unanswered
    assert.equal(first.get(2)?.outcome, FetchOutcomes.RETRY)
    assert.equal(first.get(2)?.retryReason?.error, 'THROTTLING_QUOTA_EXCEEDED')
    assert.match(first.get(2)?.retryReason?.detail ?? '', /^its leader, broker 3 \(127\.0\.0\.1:19093\), throttles kmirror's fetches \(a client quota\): the next fetch goes out in (59|60)\.\d s, as the broker asked$/)
    assert.deepEqual(fake.rechecks, [])
    assert.deepEqual(suspectsLast([3, 1, 2].map(n => fake.brokers.get(n)!)).map(b => b.port), [19093, 19091, 19092])
    fake.to(3)[0]!.answer.resolve([])
  })

  it('asks anew, never uses a late answer for a topic re-created meanwhile (another topic id)', async () => {
    const fake = new FakeCluster()
    const rounds = fake.rounds()
    await roundWith(rounds.read([at('t', 0, 10), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    fake.to(3)[0]!.answer.resolve([answer(at('t', 2, 30), 33)])
    await settle()
    fake.topicId = 'id-2'
    const next = byPartition(await roundWith(rounds.read([at('t', 0, 11), at('t', 2, 30)], how), () => fake.answerAllBut(-1)))
    assert.equal(fake.to(3).length, 2)
    assert.equal(next.get(2)?.nextOffset, 31)
  })

  it('takes a late failure as the broker\'s outage: its partitions wait and it rests; with every other broker failing too, the cluster is down', async () => {
    const fake = new FakeCluster()
    const reports: LeaderOutageReport[] = []
    stops.push(onLeaderOutage(r => reports.push(r)))
    const rounds = fake.rounds()
    await roundWith(rounds.read([at('t', 0, 10), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    fake.to(3)[0]!.answer.reject(unreachable(3, fake.brokers.get(3)!))
    await settle()
    // When the next round collects it while broker 1 answers
    const next = byPartition(await roundWith(rounds.read([at('t', 0, 11), at('t', 2, 30)], how), () => fake.answerAllBut(3)))
    // Then broker 3's partition waits where it was, with the failure, and the outage is reported once, for this flow
    assert.equal(next.get(0)?.nextOffset, 12)
    assert.deepEqual([next.get(2)?.outcome, next.get(2)?.nextOffset, next.get(2)?.retryReason?.error], [FetchOutcomes.RETRY, 30, 'NETWORK_EXCEPTION'])
    // and it rests as after a fast failure (the first back-off, 200 ms: the late fetch held no round, however long it was out)
    assert.deepEqual(reports.map(r => [r.node, r.phase, r.reader, r.retryInMs]), [[3, 'down', 'A->B', 200]])
  })

  it('fails the read when a late failure comes with every broker asked failing: no broker answered or may', async () => {
    const fake = new FakeCluster()
    const rounds = fake.rounds()
    await roundWith(rounds.read([at('t', 0, 10), at('t', 2, 30)], how), () => fake.answerAllBut(3))
    fake.to(3)[0]!.answer.reject(unreachable(3, fake.brokers.get(3)!))
    await settle()
    const read = roundWith(rounds.read([at('t', 0, 11), at('t', 2, 30)], how), () => {
      for (const s of fake.to(1)) if (!s.answer.settled) s.answer.reject(unreachable(1, fake.brokers.get(1)!))
    })
    await assert.rejects(read, (err: unknown) => err instanceof KmirrorError && err.code === ErrorCodes.CLUSTER_UNREACHABLE)
  })

  it('fails the read when every broker asked fails and none answers or may (the cluster down)', async () => {
    const fake = new FakeCluster()
    const rounds = fake.rounds()
    const read = roundWith(rounds.read([at('t', 0, 10), at('t', 1, 20)], how), () => {
      for (const s of fake.sent) if (!s.answer.settled) s.answer.reject(unreachable(s.node, fake.brokers.get(s.node)!))
    })
    await assert.rejects(read, (err: unknown) => err instanceof KmirrorError && err.code === ErrorCodes.CLUSTER_UNREACHABLE)
  })

  it('waits for one of them when every broker left has a fetch out, instead of returning nothing at once', async () => {
    const fake = new FakeCluster()
    fake.leaders = [1, 3, 3]
    const rounds = fake.rounds(200)
    await roundWith(rounds.read([at('t', 0, 10), at('t', 1, 20)], how), () => fake.answerAllBut(3))
    // When a round asks only broker 3's partition, and broker 3 answers 50 ms later
    setTimeout(() => fake.to(3)[0]!.answer.resolve([answer(at('t', 1, 20), 24)]), 50)
    const started = Date.now()
    const next = await rounds.read([at('t', 1, 20)], { ...how })
    // Then the round waited for that answer (fetch.max.wait.ms at most) and used it
    assert.equal(byPartition(next).get(1)?.nextOffset, 24)
    assert.ok(Date.now() - started >= 40, `${Date.now() - started} ms`)
  })
})
