/**
 * Something retried in the background failing several times in a row (offset syncs whose partition's leader is
 * down, a whole replication step), told once: a warning when it starts failing or fails otherwise, the repeats at
 * debug, one info line once it succeeds again.
 *
 * Invariant: two failures are "the same" when their error codes match and their messages match with the counts and
 * durations set aside ("write 8 record(s)", "write 13 record(s)", "timed out after 5012 ms": the same failure
 * whatever the try held or took), so a failure that lasts is one warning, never one per try. Numbers that name
 * something (a broker address 10.0.0.2:9092, a cluster dc1, a topic orders-v2) are kept: a failure that moves to
 * another broker or cluster is a new warning naming it.
 */
import { ErrorCodes, isKmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'

/** A number standing alone, with an optional unit ("8", "5012 ms", "1.5 s", "30000ms"), not part of a name or address. */
const COUNT_OR_DURATION = /(?<![\w.:-])\d+(?:\.\d+)?(?:ms|s)?(?![\w.:-])/g

export interface StreakMessages {
  /** The warning. */
  readonly failed: string
  /** The debug line of each repeat; `<failed> (again)` when not given. */
  readonly again?: string
  /** The info line once it succeeds again; `attempts` failed attempts before. */
  readonly recovered: (attempts: number) => string
  /** Added to every line: where the write goes (topic, cluster), so the same words never hide which write fails. */
  readonly fields?: Readonly<Record<string, unknown>>
}

/** What a background write of NOUN ("offset syncs", "the offset history") logs; `fields` name its topic and cluster. */
export function writeStreakMessages (noun: string, fields: Readonly<Record<string, unknown>> = {}): StreakMessages {
  return { failed: `cannot write ${noun}; will retry`, recovered: n => `${noun} written again after ${n} failed attempt(s)`, fields }
}

/**
 * A streak while it lasts: since its first failure (epoch ms) and how many attempts, whatever errors they failed
 * with; the last error's code and message.
 */
export interface Streak {
  readonly since: number
  readonly attempts: number
  /** The kmirror error code of the last error; INTERNAL for an error kmirror did not classify (as /status says). */
  readonly code: string
  readonly message: string
}

export class FailureStreak {
  readonly #log: Logger
  readonly #messages: StreakMessages
  #current: (Streak & { key: string }) | null = null

  constructor (log: Logger, messages: StreakMessages) {
    this.#log = log
    this.#messages = messages
  }

  failed (err: unknown, fields: Record<string, unknown> = {}): void {
    const code: string = isKmirrorError(err) ? err.code : ErrorCodes.INTERNAL
    const message = err instanceof Error ? err.message : String(err)
    const key = `${code}\u0000${message.replace(COUNT_OR_DURATION, '#')}`
    const before = this.#current
    const same = before !== null && before.key === key
    const attempts = before === null ? 1 : before.attempts + 1
    this.#current = { since: before?.since ?? Date.now(), attempts, key, code, message }
    const where = this.#messages.fields ?? {}
    if (!same) this.#log.warn({ err, ...where, ...fields }, this.#messages.failed)
    else this.#log.debug({ ...where, ...fields, code, attempts }, this.#messages.again ?? `${this.#messages.failed} (again)`)
  }

  succeeded (): void {
    const current = this.#current
    if (current === null) return
    this.#current = null
    this.#log.info({ ...this.#messages.fields, code: current.code, attempts: current.attempts, failedForMs: Date.now() - current.since }, this.#messages.recovered(current.attempts))
  }

  /** Forgets the streak without a line: what failed is no longer to be written. */
  clear (): void {
    this.#current = null
  }

  /** The streak under way, or null while the write succeeds. */
  current (): Streak | null {
    if (this.#current === null) return null
    const { key: _, ...streak } = this.#current
    return streak
  }
}
