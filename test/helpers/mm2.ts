/**
 * The real Apache MirrorMaker 2 as the tests and the benchmarks run it (dedicated mode, `kafka-local.sh mm2`): the
 * set-up of a hand-over test; in exactly-once mode, the lines of mm2.properties it needs, the same for kmirror, which
 * takes the switch and ignores the REST keys (it says so); and the progress both store in MM2's offsets topic on
 * the target.
 */
import type { TestContext } from 'node:test'
import { decodeSourceOffsetKey, decodeSourceOffsetValue } from '../../src/formats/connect-offset.ts'
import { runKafkaLocal } from './clusters.ts'
import { endOffsets, partitionCount, readPartition } from './kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from './multi-cluster.ts'
import type { KmirrorProcess } from './process.ts'
import { uniqueName, waitFor } from './wait.ts'

/** The MM2 releases a hand-over test runs: KMIRROR_TEST_MM2_RELEASES (e.g. `3.6.2,2.8.2`), or DEFAULTS. */
export function mm2Releases (defaults: string): string[] {
  return (process.env.KMIRROR_TEST_MM2_RELEASES ?? defaults).split(',').map(r => r.trim()).filter(r => r !== '')
}

/** What a hand-over test between MM2 and kmirror works on: unique names, and the process to stop at the end. */
export interface HandoverFixture {
  /** Source and target aliases, unique per test (so each run has its own Connect topics and worker group). */
  readonly a: string
  readonly b: string
  readonly topic: string
  /** MM2's (and kmirror's) progress on the target: `mm2-offsets.<a>.internal`. */
  readonly offsetsTopic: string
  /** The name `kafka-local.sh mm2` runs MM2 under. */
  readonly mm2: string
  /** The kmirror the test started, if any: killed at the end. */
  kmirror: KmirrorProcess | undefined
  /** Records that the step NAME is done, with the seconds since the start (also a test diagnostic, shown on a timeout). */
  phase: (name: string) => void
  /** The phases so far, for the test's final diagnostic. */
  readonly phases: readonly string[]
}

/**
 * Names for a hand-over test of TOPIC_PREFIX, and the clean-up after it: MM2 and kmirror stopped, every topic
 * named after the aliases deleted on both clusters.
 */
export function handoverFixture (t: TestContext, topicPrefix: string): HandoverFixture {
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const mm2 = uniqueName('mm2')
  const started = Date.now()
  const phases: string[] = []
  const fixture: HandoverFixture = {
    a, b, mm2, topic: uniqueName(topicPrefix), offsetsTopic: `mm2-offsets.${a}.internal`, kmirror: undefined, phases,
    phase: name => {
      phases.push(`${name} ${((Date.now() - started) / 1000).toFixed(1)} s`)
      t.diagnostic(phases.at(-1)!)
    }
  }
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => {
    await runKafkaLocal(['mm2-down', mm2]).catch(() => undefined)
    fixture.kmirror?.kill('SIGKILL')
    await fixture.kmirror?.waitForExit(15_000)
  })
  return fixture
}

export interface Mm2ExactlyOnceOptions {
  readonly sourceAlias: string
  readonly targetAlias: string
  /** Port of MM2's internal REST server on 127.0.0.1 (unique per concurrent MM2: tests use `shiftedPort`). */
  readonly restPort: number
}

/**
 * Exactly-once for the flow SOURCE->TARGET: the worker switch for TARGET (`exactly.once.source.support`), a
 * read_committed source read (KAFKA-14021: MM2 refuses exactly-once without it; kmirror reads read_committed
 * anyway), and MM2's internal REST server (KIP-710), which Kafka's docs (ops.html, "Exactly once") ask for in
 * dedicated mode: the leader fences zombie tasks through it.
 */
export function mm2ExactlyOnceLines ({ sourceAlias, targetAlias, restPort }: Mm2ExactlyOnceOptions): string[] {
  return [
    `${targetAlias}.exactly.once.source.support = enabled`,
    `${sourceAlias}.consumer.isolation.level = read_committed`,
    'dedicated.mode.enable.internal.rest = true',
    `listeners = http://127.0.0.1:${restPort}`
  ]
}

export interface StoredRecord {
  /** Partition of the offsets topic the record is in. */
  readonly at: number
  readonly keyHex: string
  readonly partition: number
  readonly offset: number | null
}

/**
 * Every committed Connect source-offset record of MirrorSourceConnector for ALIAS's TOPIC in OFFSETS_TOPIC on the
 * target, in partition then log order.
 */
export async function storedRecords (offsetsTopic: string, alias: string, topic: string): Promise<StoredRecord[]> {
  const out: StoredRecord[] = []
  const partitions = await partitionCount('target', offsetsTopic)
  for (let at = 0; at < partitions; at++) {
    for (const r of await readPartition('target', offsetsTopic, at, { isolation: 'read_committed' })) {
      const key = r.key === null ? null : decodeSourceOffsetKey(r.key)
      if (key === null || key.cluster !== alias || key.topic !== topic || key.connectorName !== 'MirrorSourceConnector') continue
      out.push({ at, keyHex: r.key!.toString('hex'), partition: key.partition, offset: decodeSourceOffsetValue(r.value) })
    }
  }
  return out
}

/** The newest stored offset per source partition, as MM2's worker would read it back. */
export function newestOffsets (stored: readonly StoredRecord[]): Map<number, number> {
  const out = new Map<number, number>()
  for (const r of stored) {
    if (r.offset === null) out.delete(r.partition)
    else out.set(r.partition, r.offset)
  }
  return out
}

/**
 * Waits until WHAT stored, for every partition of the source TOPIC, its last offset (end - 1: the topic must end
 * with a data record, not a transaction marker, which MM2 never stores).
 */
export async function waitForStoredEnd (offsetsTopic: string, alias: string, topic: string, what: string, timeoutMs = 120_000): Promise<void> {
  const ends = await endOffsets('source', topic)
  await waitFor(async () => {
    const stored = newestOffsets(await storedRecords(offsetsTopic, alias, topic))
    return { done: ends.every((end, p) => stored.get(p) === Number(end) - 1), state: { stored: [...stored], ends } }
  }, { timeoutMs, intervalMs: 500, message: `${what} stored the last offset of every partition` })
}
