import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OutBatch, PartitionWrite } from '../../../src/kafka/batch-writer-types.ts'
import { InDoubtBatches } from '../../../src/kafka/in-doubt.ts'
import { PartitionSend, Sequences } from '../../../src/kafka/partition-send.ts'

/** Batches of 10 records copying source offsets from `from` on. */
function write (from: number, count: number, partition = 0): PartitionWrite {
  const batches: OutBatch[] = Array.from({ length: count }, (_, i) => ({ recordCount: 10, firstOffset: from + 10 * i, lastOffset: from + 10 * i + 9, fingerprint: () => from + 10 * i, build: () => Buffer.alloc(0) }))
  return { topic: 'A.t', partition, batches }
}

/** Sends every batch of `w`, acknowledges the first `acked`, and loses the request of the rest. */
function sentAndLost (w: PartitionWrite, sequences: Sequences, acked: number): PartitionSend<PartitionWrite> {
  const send = new PartitionSend(0, w)
  while (send.hasNext()) {
    const batch = send.take()
    send.sent(batch, sequences.take(send.key, 10))
  }
  for (let b = 0; b < acked; b++) send.ack(b)
  if (acked < w.batches.length) send.lost()
  return send
}

describe('InDoubtBatches', () => {
  it('Given batches in doubt from source offset 110, then only a write starting with the same spans is admitted', () => {
    const doubts = new InDoubtBatches()
    const sequences = new Sequences()
    assert.equal(doubts.settle([sentAndLost(write(100, 3), sequences, 1)], sequences), true)
    assert.equal(sequences.peek('A.t\u00000'), 10)
    assert.equal(doubts.admits([write(110, 2)]), true)
    assert.equal(doubts.admits([write(110, 4), write(0, 1, 1)]), true)
    assert.equal(doubts.admits([write(110, 1)]), false, 'fewer batches than in doubt')
    assert.equal(doubts.admits([write(100, 3)]), false, 'started elsewhere')
    const recut = write(110, 2)
    assert.equal(doubts.admits([{ ...recut, batches: [{ ...recut.batches[0]!, recordCount: 9 }, recut.batches[1]!] }]), false, 'cut differently')
    assert.equal(doubts.admits([{ ...recut, batches: [{ ...recut.batches[0]!, fingerprint: () => -1 }, recut.batches[1]!] }]), false, 'other records')
  })

  it('Given a write sending the batches in doubt again, then an acknowledgement of all of them ends the doubt, and a "not now" answer keeps it at the same sequence', () => {
    const doubts = new InDoubtBatches()
    const sequences = new Sequences()
    doubts.settle([sentAndLost(write(100, 3), sequences, 1)], sequences)

    const notNow = new PartitionSend(0, write(110, 2))
    const batch = notNow.take()
    notNow.sent(batch, sequences.take(notNow.key, 10))
    sequences.rewind(notNow.key, (notNow.refuse(10, true) as { rewindTo: number }).rewindTo)
    assert.equal(doubts.settle([notNow], sequences), true)
    assert.equal(doubts.admits([write(110, 1)]), false, 'both batches are still in doubt')
    assert.equal(sequences.peek(notNow.key), 10)

    const acked = sentAndLost(write(110, 2), sequences, 2)
    assert.equal(doubts.settle([acked], sequences), true)
    assert.equal(doubts.size, 0)
    assert.equal(sequences.peek(acked.key), 30)
  })

  it('Given a lost request of batches without a source span, then settle says the producer must be renewed', () => {
    const doubts = new InDoubtBatches()
    const sequences = new Sequences()
    const w: PartitionWrite = { topic: 'A.t', partition: 0, batches: [{ recordCount: 1, build: () => Buffer.alloc(0) }] }
    assert.equal(doubts.settle([sentAndLost(w, sequences, 0)], sequences), false)
  })
})
