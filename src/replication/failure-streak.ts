/**
 * A write retried in the background failing several times in a row (offset syncs whose partition's leader is down),
 * told once: a warning when it starts failing or fails otherwise, the repeats at debug, one info line once it
 * succeeds again. Numbers in the message are set aside when comparing ("write 8 record(s)", "write 13 record(s)":
 * the same failure whatever the write held).
 */
import type { Logger } from '../logger.ts'

export interface StreakMessages {
  /** The warning (and the debug line of each repeat). */
  readonly failed: string
  /** The info line once it succeeds again; `attempts` failed attempts before. */
  readonly recovered: (attempts: number) => string
  /** Added to every line: where the write goes (topic, cluster), so the same words never hide which write fails. */
  readonly fields?: Readonly<Record<string, unknown>>
}

/** What a background write of NOUN ("offset syncs", "the offset history") logs; `fields` name its topic and cluster. */
export function writeStreakMessages (noun: string, fields: Readonly<Record<string, unknown>> = {}): StreakMessages {
  return { failed: `cannot write ${noun}; will retry`, recovered: n => `${noun} written again after ${n} failed attempt(s)`, fields }
}

/** A streak while it lasts: since when, how many attempts, the last error's message. */
export interface Streak {
  readonly since: number
  readonly attempts: number
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
    const message = err instanceof Error ? err.message : String(err)
    const key = message.replace(/\d+/g, '#')
    const before = this.#current
    const attempts = before === null ? 1 : before.attempts + 1
    this.#current = { since: before?.since ?? Date.now(), attempts, key, message }
    const where = this.#messages.fields ?? {}
    if (before === null || before.key !== key) this.#log.warn({ err, ...where, ...fields }, this.#messages.failed)
    else this.#log.debug({ ...where, ...fields, attempts }, `${this.#messages.failed} (again)`)
  }

  succeeded (): void {
    const current = this.#current
    if (current === null) return
    this.#current = null
    this.#log.info({ ...this.#messages.fields, attempts: current.attempts, failedForMs: Date.now() - current.since }, this.#messages.recovered(current.attempts))
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
