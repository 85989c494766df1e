/**
 * `offsets set --by-duration`: the ISO-8601 durations kafka-consumer-groups.sh takes (java.time.Duration's
 * `PnDTnHnMn.nS`), a time span back from now. Days are 24 hours, as in java.time.Duration; weeks, months and
 * years are not durations there either. Negative parts are refused: a position in the future means nothing.
 *
 *   P1D = 86 400 000 ms, PT1H30M = 5 400 000 ms, PT0.5S = 500 ms, P1DT2H = 93 600 000 ms
 */

/** The accepted forms, for messages. */
export const ISO_DURATION_FORMS = 'PnDTnHnMnS, e.g. PT15M, PT1H30M, P1D, P2DT12H, PT0.5S'

const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?)?$/i

/** Milliseconds of `text`, or null when it is not PnDTnHnMnS with at least one part (`P`, `PT` alone are not). */
export function parseIsoDuration (text: string): number | null {
  const m = DURATION.exec(text.trim())
  if (m === null || text.trim().toUpperCase().endsWith('T')) return null
  const [, days, hours, minutes, seconds, fraction] = m
  if ([days, hours, minutes, seconds].every(part => part === undefined)) return null
  const ms = Number(days ?? 0) * 86_400_000 + Number(hours ?? 0) * 3_600_000 + Number(minutes ?? 0) * 60_000 +
    Number(seconds ?? 0) * 1000 + (fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000))
  return Number.isSafeInteger(ms) ? ms : null
}
