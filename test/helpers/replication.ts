/**
 * Assertions about replicated data shared by the integration tests: record-by-record equality of a source
 * partition and its remote partition, duplicate accounting for at-least-once runs, and offset-sync checks.
 */
import assert from 'node:assert/strict'
import { decodeOffsetSync } from '../../src/formats/offset-sync.ts'
import type { ClusterRef } from './clusters.ts'
import { readPartition, type ReadRecord } from './kafka.ts'

export type { ReadRecord }

/** What must survive replication: everything but the offset. */
export function recordSignature (r: ReadRecord): string {
  const hex = (b: Buffer | null): string => (b === null ? '∅' : b.toString('hex'))
  return [hex(r.key), hex(r.value), r.timestamp.toString(), r.headers.map(([k, v]) => `${hex(k)}=${hex(v)}`).join(',')].join('|')
}

export async function readCommitted (cluster: ClusterRef, topic: string, partition: number): Promise<ReadRecord[]> {
  return readPartition(cluster, topic, partition, { isolation: 'read_committed' })
}

/** Asserts the target partition holds exactly the source partition's records, in order. */
export function assertSamePartition (source: readonly ReadRecord[], target: readonly ReadRecord[], label: string): void {
  assert.equal(target.length, source.length, `${label}: ${target.length} records on the target, ${source.length} on the source`)
  for (let i = 0; i < source.length; i++) {
    if (recordSignature(source[i]!) !== recordSignature(target[i]!)) {
      assert.fail(`${label}: record ${i} differs (source offset ${source[i]!.offset}, target offset ${target[i]!.offset}):\n` +
        `  source ${recordSignature(source[i]!)}\n  target ${recordSignature(target[i]!)}`)
    }
  }
}

/**
 * Every committed offset C from the first source record to END translates exactly, and the target from
 * translate(C) on holds exactly the source records from C on. Returns how many offsets were checked.
 */
export function assertTranslationSweep (label: string, source: readonly ReadRecord[], target: readonly ReadRecord[], translate: (c: number) => { offset: number, exact: boolean } | undefined, end: number): number {
  const targetSigs = target.map(recordSignature)
  const targetOffsets = target.map(r => Number(r.offset))
  let checked = 0
  for (let c = Number(source[0]?.offset ?? 0); c <= end; c++) {
    const t = translate(c)
    assert.ok(t !== undefined && t.exact, `${label}: committed ${c} did not translate exactly: ${JSON.stringify(t)}`)
    const expected = source.filter(r => Number(r.offset) >= c).map(recordSignature)
    const from = targetOffsets.findIndex(o => o >= t.offset)
    const actual = from === -1 ? [] : targetSigs.slice(from)
    assert.deepEqual(actual, expected, `${label}: committed ${c} -> target ${t.offset}`)
    checked++
  }
  return checked
}

/**
 * For at-least-once runs: every source record is on the target, in source order once repeats are removed,
 * and a repeat is only ever a re-send of a record already seen. Returns the number of repeats.
 * Record identity is the value, which the test makes unique.
 */
export function assertAllPresentInOrder (source: readonly ReadRecord[], target: readonly ReadRecord[], label: string): number {
  const seen = new Set<string>()
  const firstOccurrences: string[] = []
  let duplicates = 0
  for (const r of target) {
    const id = recordSignature(r)
    if (seen.has(id)) {
      duplicates++
      continue
    }
    seen.add(id)
    firstOccurrences.push(id)
  }
  const expected = source.map(recordSignature)
  assert.equal(firstOccurrences.length, expected.length, `${label}: ${firstOccurrences.length} distinct records on the target, ${expected.length} on the source`)
  for (let i = 0; i < expected.length; i++) {
    if (firstOccurrences[i] !== expected[i]) assert.fail(`${label}: record ${i} missing or out of order on the target`)
  }
  return duplicates
}

export interface DecodedSync {
  readonly topic: string
  readonly partition: number
  readonly upstreamOffset: number
  readonly downstreamOffset: number
}

export async function readOffsetSyncs (cluster: ClusterRef, syncTopic: string, sourceTopic: string): Promise<DecodedSync[]> {
  const records = await readPartition(cluster, syncTopic, 0, { isolation: 'read_uncommitted' })
  return records
    .filter(r => r.key !== null && r.value !== null)
    .map(r => decodeOffsetSync(r.key!, r.value!))
    .filter(s => s.topic === sourceTopic)
}

/**
 * Exactness of offset syncs: for every copied record, the newest sync at or before its source offset
 * translates that offset to exactly the record's target offset.
 */
export function assertSyncsTranslateExactly (syncs: readonly DecodedSync[], source: readonly ReadRecord[], target: readonly ReadRecord[], partition: number, label: string): void {
  const mine = syncs.filter(s => s.partition === partition).sort((a, b) => a.upstreamOffset - b.upstreamOffset)
  assert.ok(mine.length > 0, `${label}: no offset sync for partition ${partition}`)
  for (let i = 0; i < source.length; i++) {
    const up = Number(source[i]!.offset)
    let sync: DecodedSync | undefined
    for (const s of mine) if (s.upstreamOffset <= up) sync = s
    assert.ok(sync !== undefined, `${label}: no sync at or before source offset ${up}`)
    const translated = sync.downstreamOffset + (up - sync.upstreamOffset)
    assert.equal(translated, Number(target[i]!.offset), `${label}: source offset ${up} translates to ${translated}, the record is at ${target[i]!.offset}`)
  }
}
