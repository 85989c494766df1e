/**
 * Several `kmirror run` processes on one configuration (issue 11): start one with its HTTP endpoint, read its
 * `/status`, produce continuously, and check a target partition record by record against its source partition
 * (every record present, source order, how many times the copy went back: a "rewind").
 */
import assert from 'node:assert/strict'
import { JobNames } from '../../src/runtime/job-registry.ts'
import type { ClusterRef } from './clusters.ts'
import { ListOffsetTimestamps } from '@platformatic/kafka'
import { endOffsets, offsetsWith, produce, TIMESTAMP_BASE, type TestRecord } from './kafka.ts'
import { withAdmin, type Isolation } from './kafka-clients.ts'
import { spawnKmirror, type KmirrorProcess } from './process.ts'
import { readBatches } from './kafka-read.ts'
import { readCommitted, type ReadRecord } from './replication.ts'
import type { Cleanup } from './kafka.ts'
import { waitFor, waitForValue } from './wait.ts'

/** A flow's settings for these tests: a short session (6 s, heartbeat 1 s), every job every second or two. */
export const GROUP_SETTINGS = [
  'session.timeout.ms = 6000', 'heartbeat.interval.ms = 1000', 'emit.checkpoints.interval.seconds = 1',
  'sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 1', 'refresh.topics.interval.seconds = 2',
  'sync.topic.configs.interval.seconds = 2', 'sync.topic.acls.enabled = false', 'heartbeats.replication.enabled = false',
  'emit.heartbeats.interval.seconds = 1', 'offset.flush.interval.ms = 500'
]

export interface Instance {
  readonly process: KmirrorProcess
  readonly port: number
  readonly name: string
}

export interface StatusMember {
  readonly name: string
  readonly partitions: number
  readonly jobs: readonly string[]
}

export interface InstanceStatus {
  /** `position`: the next source offset to copy. */
  readonly partitions: readonly { topic: string, partition: number, position: number }[]
  readonly jobs: readonly { name: string, runs: number }[]
  readonly membership?: { group: string, generation: number, leader: string, self: string, members: readonly StatusMember[] }
  /** MM2's offset syncs written beside the data path: how many wait, and their writes' failure while it lasts. */
  readonly offsetSyncs?: { pending: number, failure: { error: string } | null }
  /** The reads of its internal topics held by an open transaction now (absent when none). */
  readonly heldReads?: readonly { topic: string, cluster: string, partitions: readonly { partition: number, offset: number }[], since: string }[]
}

/** Starts `kmirror run CONFIG` with its HTTP endpoint on a free port; resolves once it logged "kmirror started". */
/** Starts `kmirror run CONFIG`; resolves once it logged its start (with `started: false`, once its HTTP endpoint is up). */
export async function startInstance (config: string, name: string, t: Cleanup, extraArgs: readonly string[] = [], { started = true, ...options }: { hostname?: string, started?: boolean } = {}): Promise<Instance> {
  const process = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1', ...extraArgs], { t, ...options })
  const port = Number((await process.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1])
  if (started) await process.waitForOutput(/"msg":"kmirror started"/, 60_000)
  return { process, port, name }
}

/** The status of the one flow the instance runs (`/status`); null when it does not answer (stopped, frozen). */
export async function flowStatus (instance: Instance): Promise<InstanceStatus | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${instance.port}/status`, { signal: AbortSignal.timeout(2000) })
    const body = await response.json() as { flows: InstanceStatus[] }
    return body.flows[0] ?? null
  } catch {
    return null
  }
}

/** Produces one record per partition of TOPIC per round until `stop()`; the value is `<partition>:<round>`. */
export function produceContinuously (topic: string, partitions: number, cluster: ClusterRef = 'source'): { stop: () => Promise<number>, rounds: () => number } {
  let running = true
  let round = 0
  const loop = (async () => {
    while (running) {
      const records: TestRecord[] = Array.from({ length: partitions }, (_, partition) => ({
        topic, partition, key: Buffer.from(`k${round}`), value: Buffer.from(`${partition}:${round}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(round)
      }))
      await produce(cluster, records)
      round++
    }
  })()
  return { stop: async () => { running = false; await loop; return round }, rounds: () => round }
}

/** Waits until every partition of REMOTE on TARGET holds at least ROUNDS records (the rounds of `produceContinuously`). */
export async function waitForRounds (target: ClusterRef, remote: string, rounds: number, timeoutMs: number): Promise<void> {
  await waitFor(async () => {
    const ends = await endOffsets(target, remote)
    return { done: ends.every(e => e >= BigInt(rounds)), state: ends }
  }, { timeoutMs, intervalMs: 500, message: `all ${rounds} rounds on the target` })
}

/** The round of a record written by `produceContinuously`. */
export function roundOf (r: ReadRecord): number {
  return Number(r.value!.toString().split(':')[1])
}

/** kill -9 of every instance and wait for each to exit: a test's cleanup before its topics are deleted. */
export async function killInstances (instances: readonly Instance[]): Promise<void> {
  for (const i of instances) i.process.kill('SIGKILL')
  await Promise.all(instances.map(async i => await i.process.waitForExit(10_000)))
}

/**
 * Checks that TARGET holds every record of SOURCE, and that it is SOURCE's order with at most MAX_REWINDS places
 * where the copy goes back to an earlier record (a takeover re-copying from the stored position). Returns the
 * number of duplicates and rewinds.
 */
export function assertCopiedInOrder (source: readonly ReadRecord[], target: readonly ReadRecord[], maxRewinds: number, label: string): { duplicates: number, rewinds: number } {
  const rounds = target.map(roundOf)
  const expected = source.map(roundOf)
  const seen = new Set(rounds)
  const missing = expected.filter(r => !seen.has(r))
  assert.deepEqual(missing.slice(0, 10), [], `${label}: ${missing.length} source records missing on the target`)
  let rewinds = 0
  for (let i = 1; i < rounds.length; i++) {
    if (rounds[i]! <= rounds[i - 1]!) {
      rewinds++
      // A rewind goes back to an earlier record, then the copy runs on in source order without a gap.
    } else {
      assert.equal(rounds[i], rounds[i - 1]! + 1, `${label}: a gap on the target between rounds ${rounds[i - 1]} and ${rounds[i]} (target offset ${target[i]!.offset})`)
    }
  }
  assert.ok(rewinds <= maxRewinds, `${label}: the target goes back ${rewinds} times (at most ${maxRewinds} allowed): rounds ${JSON.stringify(rounds)}`)
  assert.ok(rounds.length === 0 || rounds[0] === expected[0], `${label}: the target starts at round ${rounds[0]}, the source at ${expected[0]}`)
  return { duplicates: target.length - new Set(rounds).size, rewinds }
}

/** Each instance's status once they split the work evenly: partitions by count, every job on exactly one. */
export async function waitForSplit (instances: readonly Instance[], partitions: number, message: string, timeoutMs = 30_000): Promise<InstanceStatus[]> {
  const found = await waitForValue(async () => {
    const statuses = await Promise.all(instances.map(flowStatus))
    const shares = statuses.map(s => s?.partitions.length ?? -1)
    const members = statuses.map(s => s?.membership?.members ?? [])
    const even = shares.every(n => Math.abs(n - partitions / instances.length) < 1)
    const agreed = members.every(m => m.length === instances.length && m.reduce((n, x) => n + x.partitions, 0) === partitions)
    const jobs = (members[0] ?? []).flatMap(m => m.jobs).sort()
    return { done: even && agreed && jobs.length === new Set(jobs).size && jobs.includes(JobNames.EMIT_HEARTBEATS), state: { shares, members: members[0], jobs, statuses } }
  }, { timeoutMs, intervalMs: 250, message })
  return found.statuses.map(s => s!)
}

/** A topic on a cluster. */
export interface TopicOn { readonly cluster: ClusterRef, readonly topic: string }

/**
 * Exactly-once: waits until read_committed readers of every partition of TO see ROUNDS records (`produceContinuously`
 * rounds), then checks each is FROM's partition exactly once, in source order. Returns when they saw them all.
 */
export async function checkExactlyOnceCopy (from: TopicOn, to: TopicOn, partitions: number, rounds: number, timeoutMs: number): Promise<number> {
  await waitFor(async () => {
    const counts = await Promise.all(Array.from({ length: partitions }, async (_, p) => (await readCommitted(to.cluster, to.topic, p)).length))
    return { done: counts.every(c => c >= rounds), state: { counts, rounds } }
  }, { timeoutMs, intervalMs: 500, message: `all ${rounds} rounds committed to ${to.topic}` })
  const committedAt = Date.now()
  for (let partition = 0; partition < partitions; partition++) {
    const source = await readCommitted(from.cluster, from.topic, partition)
    const copy = await readCommitted(to.cluster, to.topic, partition)
    const checked = assertCopiedInOrder(source, copy, 0, `${from.topic}-${partition}`)
    assert.equal(checked.duplicates, 0, `${from.topic}-${partition}: no record twice`)
    assert.equal(copy.length, source.length, `${from.topic}-${partition}`)
  }
  return committedAt
}

/**
 * Why a restarted instance may find nothing of a killed one to fence: it had lost its membership before the kill
 * (`lost`), or its session ended before the new one joined (`session-ended`: the new one created remote topics
 * while the group had no member, or the group went through a generation with neither of them). Null: the new one's
 * first generation listed the dead one, so it must have fenced it.
 */
export function nothingToFence (killed: Instance, again: Instance, group: string): 'lost' | 'session-ended' | null {
  if (/"msg":"group membership lost/.test(killed.process.stderr)) return 'lost'
  if (/"msg":"no member in group [^"]* yet/.test(again.process.stderr)) return 'session-ended'
  const generations = (stderr: string): number[] => [...stderr.matchAll(new RegExp(`"group":"${group}","generation":(\\d+)`, 'g'))].map(m => Number(m[1]))
  const [before, after] = [generations(killed.process.stderr), generations(again.process.stderr)]
  if (before.length > 0 && after.length > 0 && Math.min(...after) > Math.max(...before) + 1) return 'session-ended'
  return null
}

/** How a transaction left open by a killed instance ended on one partition: its marker's kind and time (epoch ms). */
export interface OpenAtKillEnd {
  readonly partition: number
  readonly abort: boolean
  readonly at: number
}

/**
 * How the transaction a killed instance left open on TOPIC ended, told by the markers' own times (when the
 * coordinator wrote them), not by when a reader saw the records: on every partition whose last transactional batch
 * before ENDS (its end offsets read right after the kill) has no marker of its producer before them, the first marker
 * of that producer at or past them. Empty when no transaction was open at the kill (killed between two). A COMMIT is
 * possible: the dead one may have asked to commit just before the kill, and its coordinator completes that alone.
 */
export async function openAtKillEnded (cluster: ClusterRef, topic: string, endsAtKill: readonly bigint[]): Promise<OpenAtKillEnd[]> {
  const read = await Promise.all(endsAtKill.map(async (end, partition) => end <= 0n ? null : { partition, end, batches: await readBatches(cluster, topic, partition) }))
  const ended: OpenAtKillEnd[] = []
  for (const r of read) {
    if (r === null) continue
    const { partition, end, batches } = r
    const before = batches.filter(b => b.firstOffset < end)
    const last = before.findLast(b => b.isTransactional && !b.isControl)
    if (last === undefined || before.some(b => b.isControl && b.producerId === last.producerId && b.firstOffset > last.lastOffset)) continue
    const marker = batches.find(b => b.isControl && b.producerId === last.producerId && b.firstOffset > last.lastOffset)
    assert.ok(marker !== undefined, `${topic}-${partition}: the transaction open at the kill (producer ${last.producerId}, its last batch at offset ${last.firstOffset}) has not ended`)
    ended.push({ partition, abort: marker.isAbortMarker, at: Number(marker.maxTimestamp) })
  }
  return ended
}

/**
 * Well under the transaction timeout (60 s in these tests): an abort at the timeout comes that long after the
 * transaction began, less its age at the kill (a kmirror round's transaction is under a second old).
 */
const ENDED_WITHIN_MS = 40_000

/** Asserts every transaction open at the kill (ENDED: openAtKillEnded) ended within ENDED_WITHIN_MS of KILLED_AT. */
export function assertEndedWellBeforeTimeout (ended: readonly OpenAtKillEnd[], killedAt: number): void {
  for (const e of ended) assert.ok(e.at - killedAt < ENDED_WITHIN_MS, `partition ${e.partition}: the transaction open at the kill ended (${e.abort ? 'ABORT' : 'COMMIT'}) ${e.at - killedAt} ms after the kill`)
}

/** "the transaction open at the kill ended (ABORT) 7312 ms after it", or that none was open. */
export function describeEnd (ended: readonly OpenAtKillEnd[], killedAt: number): string {
  if (ended.length === 0) return 'no transaction was open at the kill'
  return `the transaction open at the kill ended (${ended.some(e => e.abort) ? 'ABORT' : 'COMMIT'}) ${Math.max(...ended.map(e => e.at)) - killedAt} ms after it`
}

/**
 * Kills INSTANCE (kill -9) as soon as TOPIC on CLUSTER has a transaction open (a last stable offset below the high
 * watermark on some partition), so that the kill most likely leaves one open: a round's transaction is open only
 * while it writes, and a kill at a random moment mostly falls between two. After WITHIN_MS without seeing one it
 * kills all the same. Resolves once the process exited, with whether a transaction was seen open just before.
 */
export async function killWithTransactionOpen (instance: Instance, cluster: ClusterRef, topic: string, withinMs = 10_000): Promise<boolean> {
  const count = (await endOffsets(cluster, topic)).length
  const seen = await withAdmin(cluster, async admin => {
    const ends = async (isolation: Isolation): Promise<bigint[]> => await offsetsWith(admin, topic, count, ListOffsetTimestamps.LATEST, isolation)
    for (const deadline = Date.now() + withinMs; Date.now() < deadline;) {
      const [stable, high] = await Promise.all([ends('read_committed'), ends('read_uncommitted')])
      if (stable.some((s, p) => s < high[p]!)) return true
    }
    return false
  })
  instance.process.kill('SIGKILL')
  await instance.process.waitForExit(10_000)
  return seen
}
