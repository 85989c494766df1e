/**
 * What the operator is told while the progress or history read of a start waits on an open transaction: the topic,
 * the cluster, the partitions held, how long at most, and how to end it sooner; then that it ended. One warning per
 * transaction; the reads held now are listed for /status.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HeldRead } from '../../../src/kafka/topic-reader.ts'
import { HeldReads } from '../../../src/runtime/held-reads.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

const CLUSTER = { alias: 'B', brokers: 'b1:9092,b2:9092', protocol: 'SASL_SSL' } as const

function heldAt (topic: string, offsets: readonly number[], since = 0): HeldRead {
  return { topic, partitions: offsets.map((offset, partition) => ({ partition, offset, end: offset + 10, since: since + partition })), heldMs: 5_004, timeoutMs: 80_000 }
}

describe('HeldReads', () => {
  it('warns naming the topic, cluster, held partitions (at most five, counting the rest), how long, the read\'s limit and the tool lines; tells the end at info', () => {
    const { log, lines } = memoryLogger()
    const held = new HeldReads(log, CLUSTER)
    const partitions = Array.from({ length: 7 }, (_, p) => ({ partition: p, offset: 10 + p, end: 20 + p, since: 0 }))
    const read = { topic: 'mm2-offsets.A.internal', partitions, heldMs: 5_004, timeoutMs: 80_000 }
    held.held(read)
    held.released(read, 61_234, true)
    held.released(read, 80_100, false)
    assert.equal(lines.length, 3)
    const [warn, info, gaveUp] = lines as unknown as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]
    assert.equal(warn.level, 40)
    assert.deepEqual([warn.topic, warn.cluster, warn.partitions, warn.heldMs, warn.timeoutMs], ['mm2-offsets.A.internal', 'B', [0, 1, 2, 3, 4, 5, 6], 5_004, 80_000])
    assert.match(String(warn.msg), /^reading mm2-offsets\.A\.internal on cluster B waits for a transaction still open there \(partition 0 at offset 10 of 20, partition 1 at offset 11 of 21, partition 2 at offset 12 of 22, partition 3 at offset 13 of 23, partition 4 at offset 14 of 24 and 2 more: the first offset of the open transaction, held 5\.0 s\)/)
    assert.match(String(warn.msg), /gives up after 80 s in all and is tried again/)
    // (tool lines a shell runs as printed: the brokers, and the placeholder of the client or admin properties of a secured cluster)
    assert.match(String(warn.msg), /kafka-transactions\.sh --bootstrap-server b1:9092,b2:9092 --command-config CLIENT_PROPERTIES_FILE_OF_B describe-producers --topic mm2-offsets\.A\.internal --partition 0\)/)
    assert.match(String(warn.msg), /kafka-transactions\.sh --bootstrap-server b1:9092,b2:9092 --command-config ADMIN_PROPERTIES_FILE_OF_B abort --topic mm2-offsets\.A\.internal --partition 0 --start-offset 10;/)
    assert.doesNotMatch(String(warn.msg), /</)
    assert.equal(info.level, 30)
    assert.equal(info.msg, 'reading mm2-offsets.A.internal on cluster B no longer waits: the transaction that held it ended (the read took 61.2 s)')
    assert.equal(gaveUp.msg, 'reading mm2-offsets.A.internal on cluster B stopped waiting after 80.1 s without reaching its end (its error says why)')
  })

  it('warns once per topic and transaction: a second read of the topic held at the same partition and offset (a reload beside an assignment\'s read) is told at info, naming the warning; another topic warns again', () => {
    const { log, lines } = memoryLogger()
    const held = new HeldReads(log, CLUSTER)
    const assignment = heldAt('mm2-offsets.A.internal', [7, 3])
    const reload = heldAt('mm2-offsets.A.internal', [9, 3])
    held.held(assignment)
    held.held(reload)
    assert.deepEqual(lines.map(l => l.level), [40, 30])
    assert.equal(lines[1]!.msg, 'reading mm2-offsets.A.internal on cluster B also waits for the transaction open at partition 1 offset 3 (told above: "... waits for a transaction still open there")')
    // Once both ended, the same offsets held again are a new wait: warned
    held.released(assignment, 6_000, true)
    held.released(reload, 6_000, true)
    held.held(heldAt('mm2-offsets.A.internal', [9, 3]))
    assert.equal(lines.at(-1)!.level, 40)
    // And another topic at the same offsets is another transaction
    held.held(heldAt('mm2-offset-history.A.internal', [9, 3]))
    assert.equal(lines.at(-1)!.level, 40)
  })

  it('lists a read with the partitions held now once they changed, and no more once it moved on; warns again of a hold by another transaction (an offset not told), once', () => {
    const { log, lines } = memoryLogger()
    const held = new HeldReads(log, CLUSTER)
    const read = heldAt('mm2-offsets.A.internal', [2, 4], Date.parse('2026-12-06T10:00:00Z'))
    held.held(read)
    // Partition 1 still held at the offset told: no warning; partition 0 moved on
    held.changed(read, [{ partition: 1, offset: 4, end: 14, since: Date.parse('2026-12-06T10:00:00Z') }])
    assert.deepEqual(lines.map(l => l.level), [40])
    // Partition 0 held again, at a later offset: another transaction, warned with its own offset and tool lines
    const later = { partition: 0, offset: 7, end: 12, since: Date.now() - 6_000 }
    held.changed(read, [later])
    assert.deepEqual(held.status(), [{ topic: 'mm2-offsets.A.internal', cluster: 'B', partitions: [{ partition: 0, offset: 7, end: 12 }], since: new Date(later.since).toISOString(), timeoutMs: 80_000 }])
    assert.deepEqual(lines.map(l => l.level), [40, 40])
    assert.deepEqual(lines[1]!.partitions, [0])
    assert.match(String(lines[1]!.msg), /\(partition 0 at offset 7 of 12: the first offset of the open transaction, held 6\.0 s\)/)
    assert.match(String(lines[1]!.msg), /abort --topic mm2-offsets\.A\.internal --partition 0 --start-offset 7;/)
    // The same hold told again (the reader's next check) is not warned twice
    held.changed(read, [later])
    held.changed(read, [])
    assert.deepEqual(held.status(), [])
    assert.deepEqual(lines.map(l => l.level), [40, 40])
  })

  it('tells at info, not as another transaction, a partition held that the warning did not name (one transaction over partitions the read reaches at different times)', () => {
    const { log, lines } = memoryLogger()
    const held = new HeldReads(log, CLUSTER)
    const read = { topic: 'mm2-offsets.A.internal', partitions: [{ partition: 0, offset: 10, end: 20, since: 0 }], heldMs: 5_004, timeoutMs: 80_000 }
    held.held(read)
    held.changed(read, [{ partition: 0, offset: 10, end: 20, since: 0 }, { partition: 3, offset: 40, end: 44, since: 0 }])
    assert.deepEqual(lines.map(l => l.level), [40, 30])
    assert.equal(lines[1]!.msg, 'reading mm2-offsets.A.internal on cluster B also waits at partition 3 at offset 40 (the transaction told above: "... waits for a transaction ' +
      'still open there", or another; /status heldReads lists each partition held)')
    assert.deepEqual(held.status()[0]!.partitions.map(p => [p.partition, p.offset]), [[0, 10], [3, 40]])
  })

  it('does not warn again of a hold another read held now told already (a reload beside the assignment\'s read)', () => {
    const { log, lines } = memoryLogger()
    const held = new HeldReads(log, CLUSTER)
    const assignment = heldAt('mm2-offsets.A.internal', [7])
    const reload = heldAt('mm2-offsets.A.internal', [9])
    held.held(assignment)
    held.held(reload)
    held.changed(assignment, [{ partition: 0, offset: 9, end: 19, since: 0 }])
    assert.deepEqual(lines.map(l => l.level), [40, 40])
  })

  it('lists the reads held now, longest held first, and none once they ended', () => {
    const held = new HeldReads(memoryLogger().log, CLUSTER)
    const late = heldAt('mm2-offset-history.A.internal', [4], Date.parse('2026-12-06T10:00:05Z'))
    const early = heldAt('mm2-offsets.A.internal', [2, 8], Date.parse('2026-12-06T10:00:00Z'))
    held.held(late)
    held.held(early)
    assert.deepEqual(held.status(), [
      { topic: 'mm2-offsets.A.internal', cluster: 'B', partitions: [{ partition: 0, offset: 2, end: 12 }, { partition: 1, offset: 8, end: 18 }], since: '2026-12-06T10:00:00.000Z', timeoutMs: 80_000 },
      { topic: 'mm2-offset-history.A.internal', cluster: 'B', partitions: [{ partition: 0, offset: 4, end: 14 }], since: '2026-12-06T10:00:05.000Z', timeoutMs: 80_000 }
    ])
    held.released(early, 1, true)
    held.released(late, 1, false)
    assert.deepEqual(held.status(), [])
  })
})
