/**
 * An incremental fetch session with one broker (KIP-227), as the Java consumer's FetchSessionHandler keeps one:
 * the first request of a session is full (every partition, epoch 0) and the broker answers with a session id;
 * later requests carry only the partitions whose fetch position or size changed, plus the `forgotten` ones that
 * left the set, and the broker answers only partitions with records, changed offsets or errors. Over thousands of
 * idle partitions this turns a round of megabytes of request and response into a few bytes.
 *
 * Invariants:
 * - `#known` is exactly the partition set the broker holds for the session, with the positions it was last sent:
 *   it changes only when a request of this session was answered without a top-level error. Every request is
 *   built from it, so the set the broker holds after an incremental request equals the set that was wanted.
 * - The broker never advances a session partition's fetch position itself (it serves from the position last sent),
 *   so a partition whose position moved is always sent again, and one whose position did not move is served from
 *   the same position as before: a partition left out of a request is never skipped past.
 * - Anything unsure (a request that failed or timed out: the broker may or may not have applied it; a session
 *   error; another topic naming scheme) makes the next request full, naming the old session id so that the broker
 *   closes it (epoch 0 with an id: close it, open a new one).
 * - A session names topics by id (Fetch v13+) or by name (up to v12) throughout: switching starts a new session.
 *   With ids, a topic recreated under the same name has a new id: its old partitions are forgotten by the old id.
 * - One request at a time per session: the caller sends a session-less full fetch when one is in flight.
 */
import type { FetchTopic } from './protocol/fetch.ts'

/** Kafka's error codes that end a session: the next request is full. */
export const FetchSessionErrors = {
  FETCH_SESSION_ID_NOT_FOUND: 70,
  INVALID_FETCH_SESSION_EPOCH: 71,
  FETCH_SESSION_TOPIC_ID_ERROR: 106
} as const

export function isFetchSessionError (errorCode: number): boolean {
  return errorCode === FetchSessionErrors.FETCH_SESSION_ID_NOT_FOUND || errorCode === FetchSessionErrors.INVALID_FETCH_SESSION_EPOCH ||
    errorCode === FetchSessionErrors.FETCH_SESSION_TOPIC_ID_ERROR
}

/** No session (a session-less fetch, or the broker created none). */
export const NO_SESSION_ID = 0
/** The epoch of a full request that opens a session (and closes the one it names). */
export const INITIAL_EPOCH = 0
/** The epoch of a session-less fetch. */
export const FINAL_EPOCH = -1

export interface SessionPartition {
  readonly topic: string
  /** The topic's id; only compared and sent when the session names topics by id. */
  readonly topicId: string | null
  readonly partition: number
  readonly fetchOffset: number
  readonly partitionMaxBytes: number
}

/** Partitions by topic name, then partition (no per-partition string keys: a round over 5,000 builds one). */
export type PartitionSet = ReadonlyMap<string, ReadonlyMap<number, SessionPartition>>

export interface SessionTopic {
  readonly name: string
  readonly id: string | null
  readonly partitions: readonly SessionPartition[]
}

export interface ForgottenTopic {
  readonly name: string
  readonly id: string | null
  readonly partitions: readonly number[]
}

export interface SessionRequest {
  readonly sessionId: number
  readonly sessionEpoch: number
  /** Every wanted partition is in `topics` (a full request: new session, or none). */
  readonly full: boolean
  readonly usesTopicIds: boolean
  /** The partitions to send. */
  readonly topics: readonly SessionTopic[]
  readonly forgotten: readonly ForgottenTopic[]
  /** The set the broker holds once this request is answered. */
  readonly wanted: PartitionSet
}

/** The request's partitions as Fetch request topics (offsets as Int64). */
export function fetchTopics (request: SessionRequest): FetchTopic[] {
  return request.topics.map(t => ({
    name: t.name,
    id: t.id,
    partitions: t.partitions.map(p => ({ partition: p.partition, fetchOffset: BigInt(p.fetchOffset), partitionMaxBytes: p.partitionMaxBytes }))
  }))
}

/** A request outside any session: full, epoch -1 (the broker keeps nothing). */
export function sessionlessRequest (wanted: readonly SessionPartition[], usesTopicIds: boolean): SessionRequest {
  return { sessionId: NO_SESSION_ID, sessionEpoch: FINAL_EPOCH, full: true, usesTopicIds, topics: byTopic(wanted), forgotten: [], wanted: nested(wanted) }
}

export class FetchSession {
  #sessionId = NO_SESSION_ID
  /** The epoch of the next request; INITIAL_EPOCH: the next request is full. */
  #nextEpoch = INITIAL_EPOCH
  #usesTopicIds = false
  #known: PartitionSet = new Map()

  get sessionId (): number {
    return this.#sessionId
  }

  /** The next request for the WANTED partitions (their positions now), naming topics by id or not. */
  next (wanted: readonly SessionPartition[], usesTopicIds: boolean): SessionRequest {
    const wantedSet = nested(wanted)
    if (this.#nextEpoch === INITIAL_EPOCH || this.#sessionId === NO_SESSION_ID || usesTopicIds !== this.#usesTopicIds) {
      return { sessionId: this.#sessionId, sessionEpoch: INITIAL_EPOCH, full: true, usesTopicIds, topics: byTopic(wanted), forgotten: [], wanted: wantedSet }
    }
    const send: SessionPartition[] = []
    const forget: SessionPartition[] = []
    for (const p of wanted) {
      const known = this.#known.get(p.topic)?.get(p.partition)
      const idChanged = known !== undefined && usesTopicIds && known.topicId !== p.topicId
      if (idChanged) forget.push(known)
      if (known === undefined || idChanged || known.fetchOffset !== p.fetchOffset || known.partitionMaxBytes !== p.partitionMaxBytes) send.push(p)
    }
    for (const [topic, partitions] of this.#known) {
      const still = wantedSet.get(topic)
      for (const [partition, known] of partitions) if (still?.has(partition) !== true) forget.push(known)
    }
    const forgotten = byTopic(forget).map(t => ({ name: t.name, id: t.id, partitions: t.partitions.map(p => p.partition) }))
    return { sessionId: this.#sessionId, sessionEpoch: this.#nextEpoch, full: false, usesTopicIds, topics: byTopic(send), forgotten, wanted: wantedSet }
  }

  /** REQUEST was answered without a top-level error; the broker named session `sessionId` (0: it kept none). */
  answered (request: SessionRequest, sessionId: number): void {
    const current = request.full ? request.sessionEpoch === INITIAL_EPOCH : request.sessionId === this.#sessionId && request.sessionEpoch === this.#nextEpoch
    if (!current || sessionId === NO_SESSION_ID || (!request.full && sessionId !== this.#sessionId)) {
      this.#sessionId = sessionId
      this.reset()
      return
    }
    this.#sessionId = sessionId
    this.#nextEpoch = request.full ? 1 : nextEpoch(this.#nextEpoch)
    this.#usesTopicIds = request.usesTopicIds
    this.#known = request.wanted // built for this request alone, never changed after
  }

  /**
   * A request failed, timed out or was refused with a session error: the next one is full and closes this session.
   * True when a session was live (its next request would have been incremental).
   */
  reset (): boolean {
    const live = this.#nextEpoch !== INITIAL_EPOCH
    this.#nextEpoch = INITIAL_EPOCH
    this.#known = new Map()
    return live
  }
}

/** Epochs count 1, 2, ... and wrap from Int32 max to 1 (0 and -1 have their own meaning). */
export function nextEpoch (epoch: number): number {
  return epoch >= 0x7fffffff ? 1 : epoch + 1
}

function nested (partitions: readonly SessionPartition[]): PartitionSet {
  const set = new Map<string, Map<number, SessionPartition>>()
  for (const p of partitions) {
    let topic = set.get(p.topic)
    if (topic === undefined) set.set(p.topic, topic = new Map())
    topic.set(p.partition, p)
  }
  return set
}

/** Partitions grouped by topic (and id: two ids of one name are two topics), in first-seen order. */
function byTopic (partitions: readonly SessionPartition[]): SessionTopic[] {
  const topics: { name: string, id: string | null, partitions: SessionPartition[] }[] = []
  const byName = new Map<string, (typeof topics)[number][]>()
  for (const p of partitions) {
    const sameName = byName.get(p.topic) ?? []
    if (sameName.length === 0) byName.set(p.topic, sameName)
    let topic = sameName.find(t => t.id === p.topicId)
    if (topic === undefined) {
      topic = { name: p.topic, id: p.topicId, partitions: [] }
      sameName.push(topic)
      topics.push(topic)
    }
    topic.partitions.push(p)
  }
  return topics
}
