/**
 * Source brokers slower than the others in a fetch round of the data path (`partial`, fetch-rounds.ts). A round
 * used to wait for every broker it asked: a leader that holds requests without failing them (frozen before its
 * cluster fences it, a long pause, a full request queue) held every other broker's partitions as long, up to the
 * fence or `request.timeout.ms`. Now, once one broker answered, the round waits GRACE_MS past `fetch.max.wait.ms`
 * for the others (an idle broker answers at `fetch.max.wait.ms`, so only a late one is left); a broker still out
 * then keeps its request outstanding and its partitions come back RETRY, unread, where they were.
 *
 * Invariants:
 * - At most one fetch per broker: none is sent to a broker whose earlier one is still out (its fetch session's
 *   epochs stay in order, and a frozen broker is not sent a request a round).
 * - A late answer is used, not thrown away (a broker always that slow still gets its partitions copied): at the
 *   next round, for each partition asked again at the very offset it was fetched from, of the same topic id; any
 *   other partition of that broker is asked anew. Its partitions never moved meanwhile (RETRY moves no position),
 *   so the answer is the one a request sent now would start from.
 * - A late failure is the broker's failure at the round that collects it (an outage: it rests; any other error
 *   fails that round, as it would have failed the round that sent it).
 * - A round whose every broker has a fetch out waits for one of them to settle (at most `fetch.max.wait.ms`)
 *   instead of returning nothing at once.
 */
import type { FetchedBatches, PartitionPosition } from './fetch-results.ts'

/**
 * How long past `fetch.max.wait.ms` a round waits for the other brokers once one answered: an idle broker answers
 * at `fetch.max.wait.ms` plus its round trip. One that takes longer costs its partitions one round (its answer is
 * used at the next), nothing else.
 */
export const GRACE_MS = 500

export type LateOutcome =
  | { readonly ok: true, readonly value: readonly FetchedBatches[] }
  | { readonly ok: false, readonly reason: unknown, readonly tookMs: number }

interface Late {
  readonly sentAt: number
  /** The topic ids the request used (null: by name), to tell a re-created topic's partitions from the asked ones. */
  readonly topicIds: ReadonlyMap<string, string | null>
  readonly settled: Promise<void>
  outcome: LateOutcome | null
}

/**
 * PROMISES settled, or, once one of them fulfilled, as many as settled within GRACE_MS after it: undefined for
 * those still out. Until one fulfils (every broker failing, or all slow) it waits for all, as a round always did.
 */
export async function settleWithGrace<T> (promises: readonly Promise<T>[], graceMs: number): Promise<(PromiseSettledResult<T> | undefined)[]> {
  const results: (PromiseSettledResult<T> | undefined)[] = promises.map(() => undefined)
  let left = promises.length
  if (left === 0) return results
  return await new Promise(resolve => {
    let timer: NodeJS.Timeout | undefined
    const finish = (): void => {
      if (timer !== undefined) clearTimeout(timer)
      resolve([...results])
    }
    promises.forEach((promise, i) => {
      promise.then(
        value => { results[i] = { status: 'fulfilled', value } },
        (reason: unknown) => { results[i] = { status: 'rejected', reason } }
      ).finally(() => {
        if (--left === 0) finish()
        else if (timer === undefined && results[i]?.status === 'fulfilled') timer = setTimeout(finish, graceMs)
      }).catch(() => undefined)
    })
  })
}

/** The fetches of one fetcher left out at the end of their round, by broker. */
export class LateFetches {
  readonly #late = new Map<number, Late>()

  /** NODE's fetch (FETCH, sent at SENT_AT with TOPIC_IDS) is left out: kept until a later round collects it. */
  leave (node: number, fetch: Promise<readonly FetchedBatches[]>, sentAt: number, topicIds: ReadonlyMap<string, string | null>): void {
    const entry: Late = {
      sentAt,
      topicIds,
      outcome: null,
      settled: fetch.then(
        value => { entry.outcome = { ok: true, value } },
        (reason: unknown) => { entry.outcome = { ok: false, reason, tookMs: Date.now() - sentAt } }
      )
    }
    this.#late.set(node, entry)
  }

  /** Whether NODE has a fetch out: nothing more may be sent to it. */
  outstanding (node: number): boolean {
    const entry = this.#late.get(node)
    return entry !== undefined && entry.outcome === null
  }

  /** When NODE's outstanding fetch was sent; undefined when it has none. */
  sentAt (node: number): number | undefined {
    return this.outstanding(node) ? this.#late.get(node)!.sentAt : undefined
  }

  /** NODE's settled late fetch, taken: null when it has none or it is still out. */
  take (node: number): (LateOutcome & { readonly topicIds: ReadonlyMap<string, string | null> }) | null {
    const entry = this.#late.get(node)
    if (entry === undefined || entry.outcome === null) return null
    this.#late.delete(node)
    return { ...entry.outcome, topicIds: entry.topicIds }
  }

  /** Drops the settled fetches of brokers no longer asked (their partitions moved or left): nobody will collect them. */
  forgetSettled (asked: ReadonlySet<number>): void {
    for (const [node, entry] of this.#late) if (entry.outcome !== null && !asked.has(node)) this.#late.delete(node)
  }

  /** Resolves once one of NODES' outstanding fetches settles, or after MS. */
  async anySettled (nodes: Iterable<number>, ms: number): Promise<void> {
    const waiting = [...nodes].map(n => this.#late.get(n)).filter(e => e !== undefined && e.outcome === null).map(e => e!.settled)
    if (waiting.length === 0) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([...waiting, new Promise<void>(resolve => { timer = setTimeout(resolve, ms) })])
    clearTimeout(timer)
  }
}

/**
 * The late answer's partitions that answer POSITIONS (same partition, fetched from the same offset, of a topic whose
 * id did not change: CURRENT_IDS), and the positions it does not answer (to be asked anew).
 */
export function matchLate (value: readonly FetchedBatches[], positions: readonly PartitionPosition[], askedIds: ReadonlyMap<string, string | null>,
  currentIds: ReadonlyMap<string, string | null>): { answered: FetchedBatches[], unanswered: PartitionPosition[] } {
  const byKey = new Map(value.map(f => [`${f.partition}:${f.topic}`, f]))
  const answered: FetchedBatches[] = []
  const unanswered: PartitionPosition[] = []
  for (const position of positions) {
    const late = byKey.get(`${position.partition}:${position.topic}`)
    const sameTopic = askedIds.has(position.topic) && askedIds.get(position.topic) === currentIds.get(position.topic)
    if (late !== undefined && late.fromOffset === position.offset && sameTopic) answered.push(late)
    else unanswered.push(position)
  }
  return { answered, unanswered }
}
