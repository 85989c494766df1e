/**
 * The instants `--to-datetime` accepts: ISO-8601 only, checked field by field (Date.parse takes `0`, `1 2 3`
 * and rolls 2026-02-30 over to March 2). A date-time needs its zone (`Z` or an offset): a time without one would
 * depend on the machine's zone. A bare date is midnight UTC.
 *
 *   2026-11-30T14:00:00Z, 2026-11-30T14:00Z, 2026-11-30T15:00:00.250+01:00, 2026-11-30 (= 2026-11-30T00:00:00Z)
 */

/** The accepted forms, for messages. */
export const ISO_INSTANT_FORMS = '2026-11-30T14:00:00Z, 2026-11-30T15:00:00+01:00 (seconds and fractions optional) or a bare date 2026-11-30 (midnight UTC)'

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/

/** Epoch milliseconds of `text`, or null when it is not one of the accepted forms or names no real date and time. */
export function parseIsoInstant (text: string): number | null {
  const date = DATE.exec(text)
  if (date !== null) return utcMillis(Number(date[1]), Number(date[2]), Number(date[3]), 0, 0, 0, 0)
  const m = DATE_TIME.exec(text)
  if (m === null) return null
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000)
  const local = utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? '0'), millis)
  const offset = offsetMinutes(m[8]!)
  return local === null || offset === null ? null : local - offset * 60_000
}

function utcMillis (year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): number | null {
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null
  if (hour > 23 || minute > 59 || second > 59) return null
  return Date.UTC(year, month - 1, day, hour, minute, second, millis)
}

function daysIn (year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/** Minutes east of UTC of `Z` or `±HH:MM` (at most 18 hours, as java.time's ZoneOffset), or null. */
function offsetMinutes (zone: string): number | null {
  if (zone === 'Z') return 0
  const hours = Number(zone.slice(1, 3))
  const minutes = Number(zone.slice(4, 6))
  if (minutes > 59 || hours * 60 + minutes > 18 * 60) return null
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes)
}
