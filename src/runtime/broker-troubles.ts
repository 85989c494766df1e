/**
 * The brokers that troubled this process lately, for `/status`: silent (a request unanswered for its whole bound:
 * connections cut), fenced (cut as its cluster fenced it while requests waited), slow (a request held 10 s,
 * nothing cut), unreachable (the data path's fetches from it failed while other brokers answered) and throttled (a
 * client quota made it ask for pauses). The log says each once; an operator arriving later, or a dashboard, reads the same here.
 *
 * Invariants:
 * - One entry per broker and kind, with the last time, its cause and how many times. An entry is kept while its
 *   last time is within `windowMs` (15 min by default; the console's heading says so: keep in step), checked at
 *   each read and each note: the list stays short and says "lately", never "ever". `count` and `firstAt` run from
 *   the entry's beginning: a broker in trouble every minute for an hour shows 60 since an hour ago.
 * - Every report counts, the repeats of one outage included (the log says those at debug), as the metrics do.
 * - The newest first.
 */
import type { LeaderOutageReport } from '../kafka/leader-outages.ts'
import type { ThrottleReport } from '../kafka/quota-throttles.ts'
import type { SilenceReport } from '../kafka/silent-brokers.ts'
import type { SlowBrokerReport } from '../kafka/slow-brokers.ts'

export const BrokerTroubleKinds = { SILENT: 'silent', FENCED: 'fenced', SLOW: 'slow', UNREACHABLE: 'unreachable', THROTTLED: 'throttled' } as const
export type BrokerTroubleKind = typeof BrokerTroubleKinds[keyof typeof BrokerTroubleKinds]

/** One broker's trouble of one kind, as `/status` lists it. */
export interface BrokerTrouble {
  /** `host:port`. */
  readonly broker: string
  /** The labels of its clusters ("cluster B"). */
  readonly clusters: readonly string[]
  readonly kind: BrokerTroubleKind
  /** How many times since `firstAt` (each cut, each slow request). */
  readonly count: number
  readonly firstAt: string
  readonly lastAt: string
  /** The last one's cause: the request and its wait. */
  readonly cause: string
}

export const TROUBLE_WINDOW_MS = 15 * 60_000

interface Entry { clusters: Set<string>, count: number, firstAt: number, lastAt: number, cause: string }

export class BrokerTroubles {
  readonly #windowMs: number
  /** `kind broker` → its entry. */
  readonly #entries = new Map<string, { readonly broker: string, readonly kind: BrokerTroubleKind, readonly entry: Entry }>()

  constructor (windowMs = TROUBLE_WINDOW_MS) {
    this.#windowMs = windowMs
  }

  /** A broker made silent (fenced or timed out). */
  silence (report: SilenceReport, now = Date.now()): void {
    this.#note(report.broker, report.fenced ? BrokerTroubleKinds.FENCED : BrokerTroubleKinds.SILENT, report.clusters, report.cause, now)
  }

  /** A request a broker held SLOW_MS. */
  slow (report: SlowBrokerReport, now = Date.now()): void {
    this.#note(report.broker, BrokerTroubleKinds.SLOW, [report.cluster], `a ${report.api} request to it still unanswered after ${(report.waitedMs / 1000).toFixed(1)} s`, now)
  }

  /** A source broker the data path's fetches failed on while others answered (each failed try counts). */
  unreachable (report: LeaderOutageReport, now = Date.now()): void {
    this.#note(report.broker, BrokerTroubleKinds.UNREACHABLE, [report.cluster], `fetches failed: ${report.cause}`, now)
  }

  /** A broker throttling this process for a client quota (each throttled answer counts). */
  throttled (report: ThrottleReport, now = Date.now()): void {
    this.#note(report.broker, BrokerTroubleKinds.THROTTLED, report.cluster === undefined ? [] : [report.cluster], `a ${report.api} answer asked for a pause of ${(report.throttleMs / 1000).toFixed(1)} s (a client quota)`, now)
  }

  /** The troubles of the window, newest first. */
  list (now = Date.now()): BrokerTrouble[] {
    this.#prune(now)
    return [...this.#entries.values()]
      .sort((a, b) => b.entry.lastAt - a.entry.lastAt)
      .map(({ broker, kind, entry }) => ({
        broker, clusters: [...entry.clusters].sort(), kind, count: entry.count,
        firstAt: new Date(entry.firstAt).toISOString(), lastAt: new Date(entry.lastAt).toISOString(), cause: entry.cause
      }))
  }

  #note (broker: string, kind: BrokerTroubleKind, clusters: readonly string[], cause: string, now: number): void {
    this.#prune(now)
    const key = `${kind} ${broker}`
    const known = this.#entries.get(key)?.entry
    const entry = known ?? { clusters: new Set<string>(), count: 0, firstAt: now, lastAt: now, cause }
    for (const c of clusters) entry.clusters.add(c)
    entry.count++
    entry.lastAt = now
    entry.cause = cause
    if (known === undefined) this.#entries.set(key, { broker, kind, entry })
  }

  #prune (now: number): void {
    for (const [key, { entry }] of this.#entries) if (now - entry.lastAt >= this.#windowMs) this.#entries.delete(key)
  }
}
