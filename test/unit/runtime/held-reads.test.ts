/**
 * What the operator is told while the progress or history read of a start waits on an open transaction: the topic,
 * the cluster, the partitions held, how long at most, and how to end it sooner; then that it ended.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { heldReadLogger } from '../../../src/runtime/held-reads.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

describe('heldReadLogger', () => {
  it('warns naming the topic, cluster, held partitions (at most five, counting the rest), how long, the read\'s limit and the tool lines; tells the end at info', () => {
    const { log, lines } = memoryLogger()
    const listener = heldReadLogger(log, { alias: 'B', brokers: 'b1:9092,b2:9092', protocol: 'SASL_SSL' })
    const partitions = Array.from({ length: 7 }, (_, p) => ({ partition: p, offset: 10 + p, end: 20 + p, since: 0 }))
    listener.held({ topic: 'mm2-offsets.A.internal', partitions, heldMs: 5_004, timeoutMs: 80_000 })
    listener.released('mm2-offsets.A.internal', 61_234, true)
    listener.released('mm2-offsets.A.internal', 80_100, false)
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
})
