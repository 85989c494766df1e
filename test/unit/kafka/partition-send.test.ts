import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_SEQUENCE, PartitionSend, SendStatuses, Sequences } from '../../../src/kafka/partition-send.ts'

const write = (batches: number) => ({ topic: 'A.t', partition: 0, batches: Array.from({ length: batches }, (_, i) => i) })

/** Sends every batch it may, as one request each, taking their sequences; returns [batch, sequence] pairs. */
function sendAll (send: PartitionSend<ReturnType<typeof write>>, sequences: Sequences, records = 10): [number, number][] {
  const sent: [number, number][] = []
  while (send.hasNext()) sent.push([send.take(), sequences.take(send.key, records)])
  return sent
}

describe('Sequences', () => {
  it('Given batches of 10 records, then each takes the next base sequence, per partition', () => {
    const s = new Sequences()
    assert.deepEqual([s.take('a', 10), s.take('a', 10), s.take('b', 5), s.take('a', 1)], [0, 10, 0, 20])
  })

  it('Given the end of the sequence space, then it wraps to 0 as the Java producer does', () => {
    const s = new Sequences()
    s.rewind('a', MAX_SEQUENCE - 5)
    assert.deepEqual([s.take('a', 5), s.take('a', 3)], [MAX_SEQUENCE - 5, 0])
  })

  it('Given a new producer id, then every partition starts at 0 again', () => {
    const s = new Sequences()
    s.take('a', 7)
    s.clear()
    assert.equal(s.take('a', 1), 0)
  })
})

describe('PartitionSend', () => {
  it('Given three batches in flight and the second refused "not now", then the sequence rewinds to it, the third answer changes nothing, and the next attempt resends from it with the same sequence', () => {
    const sequences = new Sequences()
    const send = new PartitionSend(0, write(3))
    const sent = sendAll(send, sequences)
    assert.deepEqual(sent, [[0, 0], [1, 10], [2, 20]])
    assert.deepEqual(send.ack(0), { type: 'acked' })
    const refused = send.refuse(10, true)
    assert.deepEqual(refused, { type: 'not-now', rewindTo: 10 })
    sequences.rewind(send.key, 10)
    assert.deepEqual(send.refuse(20, true), { type: 'ignored' })
    assert.equal(send.hasNext(), false)
    // When the leader is ready again
    send.resume()
    assert.deepEqual(sendAll(send, sequences), [[1, 10], [2, 20]])
    assert.deepEqual([send.ack(1), send.ack(2)], [{ type: 'acked' }, { type: 'acked' }])
    assert.equal(send.acked, 3)
  })

  it('Given a batch acknowledged after an earlier one was refused "not now", then the partition fails (the sequence rule did not hold)', () => {
    const send = new PartitionSend(0, write(2))
    sendAll(send, new Sequences())
    send.refuse(0, true)
    assert.deepEqual(send.ack(1), { type: 'failed', appendedAfterRefusal: true })
    assert.equal(send.status, SendStatuses.FAILED)
    assert.equal(send.acked, 0)
  })

  it('Given a batch refused for good (e.g. MESSAGE_TOO_LARGE), then a later acknowledgement of that write is no acknowledgement: it says a batch was appended after the refused one (once), and resume does not revive it', () => {
    const send = new PartitionSend(0, write(4))
    sendAll(send, new Sequences())
    send.ack(0)
    assert.deepEqual(send.refuse(10, false), { type: 'failed', appendedAfterRefusal: false })
    assert.deepEqual(send.ack(2), { type: 'appended-after-failure' })
    assert.deepEqual(send.ack(3), { type: 'ignored' })
    assert.equal(send.acked, 1)
    send.resume()
    assert.equal(send.hasNext(), false)
  })

  it('Given a request lost as a whole (connection cut), then the partition is in doubt: later answers are ignored, resume does not revive it, and each batch keeps the sequence it went out with', () => {
    const sequences = new Sequences()
    const send = new PartitionSend(0, write(3))
    for (const [batch, sequence] of sendAll(send, sequences)) send.sent(batch, sequence)
    send.ack(0)
    assert.deepEqual(send.lost(), { type: 'in-doubt' })
    assert.equal(send.status, SendStatuses.IN_DOUBT)
    assert.deepEqual([send.ack(1), send.lost(), send.refuse(20, false)], [{ type: 'ignored' }, { type: 'ignored' }, { type: 'ignored' }])
    send.resume()
    assert.equal(send.hasNext(), false)
    assert.deepEqual([send.acked, send.sequenceOf(1), send.sequenceOf(2), sequences.peek(send.key)], [1, 10, 20, 30])
  })

  it('Given a partition sent again after a doubt, then a refusal of its sequence makes it OUT_OF_STEP; the same refusal of a partition not in doubt is a plain failure', () => {
    const resent = new PartitionSend(0, write(1))
    resent.resent = true
    sendAll(resent, new Sequences())
    assert.deepEqual(resent.refuse(0, false, true), { type: 'out-of-step' })
    assert.deepEqual(resent.ack(0), { type: 'ignored' })
    const fresh = new PartitionSend(0, write(1))
    sendAll(fresh, new Sequences())
    assert.deepEqual(fresh.refuse(0, false, true), { type: 'failed', appendedAfterRefusal: false })
  })

  it('Given the first batch of a producer id on a partition (sequence 0) sent, then nothing more of the partition may go out until its answer; a later sequence does not wait', () => {
    const sequences = new Sequences()
    const send = new PartitionSend(0, write(3))
    send.sent(send.take(), sequences.take(send.key, 1))
    assert.deepEqual([send.hasNext(), send.mayTakeNext()], [true, false])
    send.ack(0)
    assert.equal(send.mayTakeNext(), true)
    send.sent(send.take(), sequences.take(send.key, 1))
    assert.equal(send.mayTakeNext(), true, 'sequence 1 is no first batch')
  })

  it('Given maxInFlight-style sending of one batch at a time, then batches go out strictly in order', () => {
    const send = new PartitionSend(0, write(3))
    assert.deepEqual([send.take(), send.take()], [0, 1])
    assert.equal(send.hasNext(), true)
    assert.equal(send.take(), 2)
    assert.equal(send.hasNext(), false)
  })
})
