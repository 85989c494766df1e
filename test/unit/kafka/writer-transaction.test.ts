import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { fencedError, type TransactionCoordinator } from '../../../src/kafka/transactions.ts'
import { PartitionSend } from '../../../src/kafka/partition-send.ts'
import { isTransactionFencing, WriterTransaction } from '../../../src/kafka/writer-transaction.ts'
import type { PartitionWrite } from '../../../src/kafka/batch-writer.ts'

const TXN = 'g-host:1:2'
/** WriterTransaction's fencing state needs no coordinator call. */
const NO_COORDINATOR = {} as unknown as TransactionCoordinator

function transaction (): WriterTransaction {
  return new WriterTransaction(TXN, NO_COORDINATOR, { label: 'cluster B', alias: 'B' })
}

describe('WriterTransaction fencing and memberships', () => {
  it('Given a fencing answered with the membership intact, then every later call throws it', () => {
    const t = transaction()
    const err = fencedError('write to cluster B', 'PRODUCER_FENCED', TXN)
    assert.equal(t.noteFenced(err, t.era), err)
    assert.throws(() => t.throwIfFenced(), e => e === err)
    assert.throws(() => t.throwIfFenced(), e => e === err)
  })

  it('Given the lease gate\'s FENCED (no transactional id), then it is not remembered', () => {
    const t = transaction()
    t.noteFenced(new KmirrorError(ErrorCodes.FENCED, 'not writing: the lease is not valid', { retriable: true }), t.era)
    assert.doesNotThrow(() => t.throwIfFenced())
  })

  it('Given the membership ends, then its fencing is forgotten, returned once, and a write begun before throws a retriable FENCED', () => {
    const t = transaction()
    const before = t.era
    const err = fencedError('add partitions', 'INVALID_PRODUCER_EPOCH', TXN)
    t.noteFenced(err, before)
    assert.equal(t.endMembership(), err)
    assert.doesNotThrow(() => t.throwIfFenced())
    assert.equal(t.endMembership(), null)
    assert.throws(() => t.throwIfEnded(before), (e: unknown) => e instanceof KmirrorError && e.code === ErrorCodes.FENCED && e.retriable && /membership .* is lost/.test(e.message))
    assert.throws(() => t.throwIfEnded(before), (e: unknown) => !isTransactionFencing(e))
    assert.doesNotThrow(() => t.throwIfEnded(t.era))
  })

  it('Given a fencing answered to a request of a membership that has ended since, then it is never remembered', () => {
    const t = transaction()
    const era = t.era
    t.endMembership()
    t.noteFenced(fencedError('write to cluster B', 'PRODUCER_FENCED', TXN), era)
    assert.doesNotThrow(() => t.throwIfFenced())
    // And one answered in the new membership is
    const now = fencedError('write to cluster B', 'PRODUCER_FENCED', TXN)
    t.noteFenced(now, t.era)
    assert.throws(() => t.throwIfFenced(), e => e === now)
  })

  it('Given a partition refused with an error answered after appending (NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT), then the round aborts (retriable), naming the partition; a refusal of a batch not appended does not', () => {
    for (const error of ['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'REQUEST_TIMED_OUT']) {
      assert.throws(() => transaction().refused([{ write: 0, topic: 'A.t', partition: 3, error, message: null, retriable: true }]), (e: unknown) =>
        e instanceof KmirrorError && e.code === ErrorCodes.PRODUCE && e.retriable &&
        e.message === `write A.t-3 in the transaction of ${TXN} on cluster B: Kafka error ${error}, answered for a batch the broker may have appended; the transaction is aborted and the round written again`)
    }
    const t = transaction()
    assert.doesNotThrow(() => t.refused([{ write: 0, topic: 'A.t', partition: 3, error: 'MESSAGE_TOO_LARGE', message: null, retriable: false }]))
    assert.equal(t.renewAfter, true)
  })

  it('Given a batch answered NOT_LEADER_OR_FOLLOWER (its leader moved while it waited for replicas) and not acknowledged since, then the round aborts and the producer is renewed; one acknowledged on a resend, never sent, or refused before any append, does not', () => {
    const send = (): PartitionSend<PartitionWrite> => new PartitionSend(0, { topic: 'A.t', partition: 3, batches: [{}, {}] } as unknown as PartitionWrite)
    const refused = send()
    refused.refuse(7, true, false, true)
    const t = transaction()
    assert.throws(() => t.notNowInDoubt([refused]), (e: unknown) =>
      e instanceof KmirrorError && e.code === ErrorCodes.PRODUCE && e.retriable && /^write A\.t-3 in the transaction of .* on cluster B: its leader moved while a batch waited for its replicas/.test(e.message))
    assert.equal(t.renewAfter, true)
    const resent = send()
    resent.refuse(7, true, false, true)
    resent.acked = 2
    const unreachable = send()
    unreachable.unreachable()
    // LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION: refused before any append
    const beforeAppend = send()
    beforeAppend.refuse(7, true, false, false)
    const quiet = transaction()
    assert.doesNotThrow(() => quiet.notNowInDoubt([resent, unreachable, beforeAppend]))
    assert.equal(quiet.renewAfter, false)
  })
})
