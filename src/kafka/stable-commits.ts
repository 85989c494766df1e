/**
 * Stable reads of consumer groups' committed offsets (group-admin.ts `stableCommittedOffsetsOf`): OffsetFetch with
 * require_stable, for the decisions that compare with a group's current commit.
 *
 * Why stable: Kafka 4's group coordinator answers a plain OffsetFetch from the high watermark of its
 * __consumer_offsets partition, which lags the log for a moment after a broker took the partition over; a group
 * just committed to could read as having no commit (a plan read "none", its check before the write read 5). A
 * stable read is answered from every commit written, once replicated.
 *
 * Invariants:
 * - A group some of whose asked partitions a transaction holds open (UNSTABLE_OFFSET_COMMIT) is in use: an
 *   application commits for it in transactions, with members or not. It is asked UNSTABLE_TRIES times,
 *   UNSTABLE_BACKOFF_MS apart (a transaction about to end is waited for), then read plainly and told
 *   `inTransaction`. Each attempt is one request (`fetchOnce` does not retry by itself): the library's own
 *   retries, nested twice, made a busy group cost 36 requests and 3.5 s, and a plan of a few such groups ran
 *   past its deadline, told as a cluster out of reach instead of a refusal.
 * - Other retriable failures (a coordinator moving or loading, a connection lost, an attempt past its time) are
 *   asked again RETRIES times, RETRY_BACKOFF_MS apart, as the library would, and never past DEADLINE_AT; a failure
 *   the library would not retry (any part of it not retriable: a refusal, a closed client) is thrown at once.
 * - Each attempt gets the time left until DEADLINE_AT (`fetchOnce`'s argument), so a read ends by it.
 * - One group's open transaction fails the request for every group in it: then each group is asked alone, so
 *   only the busy ones are told in use.
 * - Kafka checks for open transactions only on the partitions asked for, or, when a group is asked for all of
 *   its partitions, on those that already have a commit: a caller that knows the partitions it will write asks
 *   for them (`partitions`). Brokers before Kafka 2.5 (OffsetFetch before v7) have no stable reads: the library
 *   sends the request without the flag, and the answer is plain.
 */
import { KmirrorError } from '../errors.ts'
import { searchErrorTree } from './error-tree.ts'
import { kafkaErrorNames } from './errors.ts'

export interface CommittedOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly metadata: string
}

/** A group's commits read stable. */
export interface StableCommits {
  readonly offsets: CommittedOffset[]
  /** A transaction holds commits of the group open: it is in use, and `offsets` are its last committed ones, read plainly. */
  readonly inTransaction: boolean
}

/** One group asked about, and the partitions asked for (every partition with a commit when absent). */
export interface StableRequest {
  readonly groupId: string
  readonly topics?: { name: string, partitionIndexes: number[] }[]
}

export interface StableReads {
  /** One OffsetFetch (require_stable) for REQUESTS, by group, within TIMEOUT_MS; no retries of its own. */
  readonly fetchOnce: (requests: readonly StableRequest[], timeoutMs: number) => Promise<Map<string, CommittedOffset[]>>
  /** A plain read of one group's commits: the `offsets` of a group told in use; [] for it when absent. */
  readonly plain?: (groupId: string) => Promise<CommittedOffset[]>
  readonly sleep?: (ms: number) => Promise<void>
}

export const UNSTABLE_TRIES = 3
export const UNSTABLE_BACKOFF_MS = 200
export const RETRY_BACKOFF_MS = 250
export const RETRIES = 5

const IN_TRANSACTION = Symbol('in transaction')

/** REQUESTS read stable by DEADLINE_AT (epoch ms), by group (see the invariants). */
export async function readStable (requests: readonly StableRequest[], reads: StableReads, deadlineAt: number): Promise<Map<string, StableCommits>> {
  const all = await attempt(requests, reads, deadlineAt)
  if (all !== IN_TRANSACTION) return new Map(requests.map(r => [r.groupId, { offsets: all.get(r.groupId) ?? [], inTransaction: false }]))
  const out = new Map<string, StableCommits>()
  for (const request of requests) {
    const one = requests.length === 1 ? IN_TRANSACTION : await attempt([request], reads, deadlineAt)
    out.set(request.groupId, one === IN_TRANSACTION
      ? { offsets: await reads.plain?.(request.groupId) ?? [], inTransaction: true }
      : { offsets: one.get(request.groupId) ?? [], inTransaction: false })
  }
  return out
}

async function attempt (requests: readonly StableRequest[], reads: StableReads, deadlineAt: number): Promise<Map<string, CommittedOffset[]> | typeof IN_TRANSACTION> {
  const sleep = reads.sleep ?? (async (ms: number) => await new Promise<void>(resolve => setTimeout(resolve, ms)))
  let unstable = 0
  let failed = 0
  for (;;) {
    try {
      return await reads.fetchOnce(requests, Math.max(1, deadlineAt - Date.now()))
    } catch (err) {
      const inTransaction = isUnstableCommit(err)
      const wait = inTransaction ? UNSTABLE_BACKOFF_MS : RETRY_BACKOFF_MS
      const timeLeft = Date.now() + wait < deadlineAt
      if (inTransaction && (++unstable >= UNSTABLE_TRIES || !timeLeft)) return IN_TRANSACTION
      if (!inTransaction && (++failed > RETRIES || !timeLeft || !mayRetry(err))) throw err
      await sleep(wait)
    }
  }
}

/** A failure the library itself would ask again: retriable as kmirror words it, and no part of it refused for good. */
function mayRetry (err: unknown): boolean {
  if (!(err instanceof KmirrorError) || !err.retriable) return false
  return searchErrorTree(err, e => ((e as { canRetry?: unknown }).canRetry === false ? true : undefined)) !== true
}

/** Whether a read failed because a transaction holds commits of a group open. */
export function isUnstableCommit (err: unknown): boolean {
  return kafkaErrorNames(err).includes('UNSTABLE_OFFSET_COMMIT')
}
