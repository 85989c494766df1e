/**
 * What the operator is told while the progress or history read of a start waits on an open transaction: the topic,
 * the cluster, the partitions held, how long at most, and how to end it sooner; then that it ended.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { heldReadLogger } from '../../../src/runtime/held-reads.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

describe('heldReadLogger', () => {
  it('warns naming the topic, cluster, held partitions (at most five, counting the rest), the longest wait and the fix; tells the end at info', () => {
    const { log, lines } = memoryLogger()
    const listener = heldReadLogger(log, 'B')
    const partitions = Array.from({ length: 7 }, (_, p) => ({ partition: p, offset: 10 + p, end: 20 + p }))
    listener.held({ topic: 'mm2-offsets.A.internal', partitions, waitedMs: 5_004, timeoutMs: 80_000 })
    listener.released('mm2-offsets.A.internal', 61_234)
    assert.equal(lines.length, 2)
    const [warn, info] = lines as unknown as [Record<string, unknown>, Record<string, unknown>]
    assert.equal(warn.level, 40)
    assert.deepEqual([warn.topic, warn.cluster, warn.partitions, warn.timeoutMs], ['mm2-offsets.A.internal', 'B', [0, 1, 2, 3, 4, 5, 6], 80_000])
    assert.match(String(warn.msg), /^reading mm2-offsets\.A\.internal on cluster B waits for a transaction still open there \(partition 0 at offset 10 of 20, partition 1 at offset 11 of 21, partition 2 at offset 12 of 22, partition 3 at offset 13 of 23, partition 4 at offset 14 of 24 and 2 more: held at the last stable offset\)/)
    assert.match(String(warn.msg), /80 s at most/)
    assert.match(String(warn.msg), /kafka-transactions\.sh --bootstrap-server <B> describe-producers --topic mm2-offsets\.A\.internal --partition 0/)
    assert.equal(info.level, 30)
    assert.equal(info.msg, 'reading mm2-offsets.A.internal on cluster B no longer waits: the transaction that held it ended after 61.2 s')
  })
})
