import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FetchSession, FetchSessionErrors, fetchTopics, FINAL_EPOCH, INITIAL_EPOCH, isFetchSessionError, nextEpoch, sessionlessRequest, type SessionPartition, type SessionRequest } from '../../../src/kafka/fetch-session.ts'
import { encodeRequest } from '../../../src/kafka/protocol/api.ts'
import { FetchApi } from '../../../src/kafka/protocol/fetch.ts'
import { ByteReader } from '../../../src/kafka/protocol/wire.ts'

const ID_A = '11111111-1111-1111-1111-111111111111'
const ID_A2 = '22222222-2222-2222-2222-222222222222'
const ID_B = '33333333-3333-3333-3333-333333333333'
const part = (topic: string, partition: number, offset: number, topicId: string | null = topic === 'a' ? ID_A : ID_B, maxBytes = 1024): SessionPartition =>
  ({ topic, topicId, partition, fetchOffset: offset, partitionMaxBytes: maxBytes })
/** "topic-partition@offset" of every partition a request sends. */
const sent = (request: SessionRequest): string[] => request.topics.flatMap(t => t.partitions.map(p => `${t.name}-${p.partition}@${p.fetchOffset}`))
const forgotten = (request: SessionRequest): string[] => request.forgotten.flatMap(t => t.partitions.map(p => `${t.id ?? t.name}-${p}`))

/** A session whose first full request was answered with session id 42. */
function openSession (wanted: SessionPartition[], usesTopicIds = true): FetchSession {
  const session = new FetchSession()
  session.answered(session.next(wanted, usesTopicIds), 42)
  return session
}

describe('FetchSession (KIP-227 incremental fetch sessions)', () => {
  it('Given a new session, then the first request is full at epoch 0 and the broker\'s session id is used from then on', () => {
    const session = new FetchSession()
    const first = session.next([part('a', 0, 5), part('a', 1, 7), part('b', 0, 0)], true)
    assert.deepEqual([first.full, first.sessionId, first.sessionEpoch], [true, 0, INITIAL_EPOCH])
    assert.deepEqual(sent(first), ['a-0@5', 'a-1@7', 'b-0@0'])
    session.answered(first, 42)
    const second = session.next([part('a', 0, 5), part('a', 1, 7), part('b', 0, 0)], true)
    assert.deepEqual([second.full, second.sessionId, second.sessionEpoch], [false, 42, 1])
    assert.deepEqual([sent(second), forgotten(second)], [[], []])
  })

  it('Given an open session, then only partitions whose position or size changed or that are new are sent, and those that left are forgotten', () => {
    const session = openSession([part('a', 0, 5), part('a', 1, 7), part('b', 0, 0)])
    const request = session.next([part('a', 0, 9), part('a', 1, 7), part('b', 0, 0, ID_B, 2048), part('b', 1, 3)], true)
    assert.deepEqual(sent(request), ['a-0@9', 'b-0@0', 'b-1@3'])
    assert.deepEqual(forgotten(request), [])
    session.answered(request, 42)
    const next = session.next([part('a', 0, 9)], true)
    assert.equal(next.sessionEpoch, 2)
    assert.deepEqual(sent(next), [])
    assert.deepEqual(forgotten(next), [`${ID_A}-1`, `${ID_B}-0`, `${ID_B}-1`])
  })

  it('Given a request that was not answered, then the next one is built from what the broker last acknowledged', () => {
    const session = openSession([part('a', 0, 5)])
    session.next([part('a', 0, 9)], true) // lost: never answered
    const again = session.next([part('a', 0, 9)], true)
    assert.deepEqual([again.sessionEpoch, sent(again)], [1, ['a-0@9']])
  })

  it('Given a failure or a session error, then the next request is full, epoch 0, naming the old session so the broker closes it', () => {
    const session = openSession([part('a', 0, 5), part('a', 1, 7)])
    assert.equal(session.reset(), true)
    const full = session.next([part('a', 0, 5), part('a', 1, 7)], true)
    assert.deepEqual([full.full, full.sessionId, full.sessionEpoch], [true, 42, INITIAL_EPOCH])
    assert.deepEqual(sent(full), ['a-0@5', 'a-1@7'])
    assert.equal(session.reset(), false, 'no session was live any more')
  })

  it('Given a broker that keeps no session (id 0 in the answer), then every request stays full', () => {
    const session = new FetchSession()
    session.answered(session.next([part('a', 0, 5)], true), 0)
    const next = session.next([part('a', 0, 5)], true)
    assert.deepEqual([next.full, next.sessionId, next.sessionEpoch, sent(next)], [true, 0, INITIAL_EPOCH, ['a-0@5']])
  })

  it('Given a topic recreated under the same name, then its partitions are forgotten by the old id and sent with the new one', () => {
    const session = openSession([part('a', 0, 5), part('a', 1, 5)])
    const request = session.next([part('a', 0, 0, ID_A2), part('a', 1, 0, ID_A2)], true)
    assert.deepEqual(forgotten(request), [`${ID_A}-0`, `${ID_A}-1`])
    assert.deepEqual(request.topics.map(t => t.id), [ID_A2])
  })

  it('Given a switch between topic names and topic ids (a topic without an id joined), then a new session starts with a full request', () => {
    const session = openSession([part('a', 0, 5)])
    const request = session.next([part('a', 0, 5, null), part('c', 0, 0, null)], false)
    assert.deepEqual([request.full, request.sessionEpoch, sent(request)], [true, INITIAL_EPOCH, ['a-0@5', 'c-0@0']])
  })

  it('Given an answer naming another session to an incremental request, then the session starts over', () => {
    const session = openSession([part('a', 0, 5)])
    session.answered(session.next([part('a', 0, 6)], true), 43)
    assert.equal(session.next([part('a', 0, 6)], true).full, true)
  })

  it('epochs wrap from Int32 max to 1; session errors are recognized; a session-less request is full at epoch -1', () => {
    assert.deepEqual([nextEpoch(1), nextEpoch(0x7fffffff)], [2, 1])
    assert.ok(Object.values(FetchSessionErrors).every(isFetchSessionError))
    assert.equal(isFetchSessionError(1), false)
    const request = sessionlessRequest([part('a', 0, 1)], false)
    assert.deepEqual([request.full, request.sessionId, request.sessionEpoch, sent(request)], [true, 0, FINAL_EPOCH, ['a-0@1']])
  })
})

/** Reads the session fields and forgotten topics back from an encoded Fetch request (v12: names; v13: ids). */
function readSessionFields (version: number, request: SessionRequest): { sessionId: number, epoch: number, topics: string[], forgotten: string[] } {
  const r = new ByteReader(Buffer.concat(encodeRequest(FetchApi, version, {
    maxWaitMs: 500, minBytes: 1, maxBytes: 1000, isolationLevel: 1, topics: fetchTopics(request), sessionId: request.sessionId, sessionEpoch: request.sessionEpoch, forgotten: request.forgotten
  })), true)
  r.int32(); r.int32(); r.int32(); r.int32(); r.int8() // replica id, max wait, min bytes, max bytes, isolation
  const sessionId = r.int32()
  const epoch = r.int32()
  const topicName = (): string => version >= 13 ? r.uuid() : r.string()
  const topics = r.structs(r => {
    const name = topicName()
    const partitions = r.structs(r => { const p = r.int32(); r.int32(); const offset = r.int64(); r.int32(); r.int64(); r.int32(); return `${p}@${offset}` })
    return `${name}:${partitions.join(',')}`
  })
  const forgotten = r.structs(r => {
    const name = topicName()
    const partitions = Array.from({ length: r.uvarint() - 1 }, () => r.int32())
    return `${name}:${partitions.join(',')}`
  })
  return { sessionId, epoch, topics, forgotten }
}

describe('Fetch request with a session', () => {
  it('Given an incremental request, then v12 names its topics and forgotten topics, v13 gives their ids', () => {
    const named = openSession([part('a', 0, 5, null), part('b', 0, 1, null)], false)
    const v12 = readSessionFields(12, named.next([part('a', 0, 6, null)], false))
    assert.deepEqual(v12, { sessionId: 42, epoch: 1, topics: ['a:0@6'], forgotten: ['b:0'] })
    const byId = openSession([part('a', 0, 5), part('b', 0, 1)])
    const v13 = readSessionFields(13, byId.next([part('a', 0, 6)], true))
    assert.deepEqual(v13, { sessionId: 42, epoch: 1, topics: [`${ID_A}:0@6`], forgotten: [`${ID_B}:0`] })
  })
})
