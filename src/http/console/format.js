// Pure formatting for the console (no DOM): numbers, bytes, rates, ages. Unit-tested (test/unit/http/console-format.test.ts);
// its types are in format.d.ts.

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const ONE_DECIMAL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 })

/** A count with thousands separators; `—` when unknown (null or undefined). */
export function formatCount (n) {
  return typeof n === 'number' && Number.isFinite(n) ? GROUPED.format(n) : '—'
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** Bytes in binary units, one decimal from KiB on: 1536 → `1.5 KiB`. */
export function formatBytes (n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—'
  let value = n
  let unit = 0
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${GROUPED.format(value)} B` : `${ONE_DECIMAL.format(value)} ${BYTE_UNITS[unit]}`
}

/** Records per second: `1,234/s`, below 10 with one decimal (`2.5/s`). */
export function formatRate (n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—'
  return `${n < 10 ? ONE_DECIMAL.format(n) : GROUPED.format(n)}/s`
}

/** Bytes per second: `1.5 KiB/s`. */
export function formatByteRate (n) {
  return typeof n === 'number' && Number.isFinite(n) ? `${formatBytes(n)}/s` : '—'
}

/** A duration in seconds for people: `0.4 s`, `42 s`, `3 min 5 s`, `2 h 7 min`, `3 d 4 h`. */
export function formatSeconds (s) {
  if (typeof s !== 'number' || !Number.isFinite(s)) return '—'
  if (s < 10) return `${ONE_DECIMAL.format(s)} s`
  const whole = Math.round(s)
  if (whole < 60) return `${whole} s`
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`
  if (whole < 86_400) return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`
  return `${Math.floor(whole / 86_400)} d ${Math.floor((whole % 86_400) / 3600)} h`
}

/** How long ago an ISO-8601 time was, from `nowMs`: `5 s ago`; `never` for null. */
export function formatAgo (iso, nowMs) {
  if (typeof iso !== 'string') return 'never'
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return '—'
  return `${formatSeconds(Math.max(0, (nowMs - at) / 1000))} ago`
}

/** `orders-3`: a topic partition as Kafka's tools write it. */
export function formatPartition (topic, partition) {
  return `${topic}-${partition}`
}

/** A flow's state as a CSS class: `caught up` → `state-caught-up`. */
export function stateClass (state) {
  return `state-${String(state).replace(/[^a-z]+/gi, '-').toLowerCase()}`
}

/** Flow states that make the instance unhealthy, worst first (status-summary.ts `flowState`). */
const UNHEALTHY_FIRST = ['failed', 'stalled', 'cannot copy', 'degraded']

/**
 * The page header's word for the instance (a /status?summary document): its worst flow's state when one is
 * unhealthy, so a flow held at start says `degraded` in the header as on its card, never `starting` above it.
 */
export function headerState (doc) {
  if (doc.healthy) return 'healthy'
  if (doc.error !== null) return 'failed'
  if (doc.stalled.length > 0) return 'stalled'
  return UNHEALTHY_FIRST.find(s => doc.flows.some(f => f.state === s)) ?? (doc.ready ? 'degraded' : 'starting')
}

/**
 * A read of a flow's internal topic held by an open transaction (/status `heldReads`): where, for how long, what
 * follows, and where the way to end it is told.
 */
export function formatHeldRead (read, nowMs) {
  const shown = read.partitions.slice(0, 3).map(p => `partition ${p.partition} at offset ${formatCount(p.offset)}`).join(', ')
  const more = read.partitions.length > 3 ? ` and ${read.partitions.length - 3} more` : ''
  const heldFor = formatSeconds(Math.max(0, (nowMs - Date.parse(read.since)) / 1000))
  return `waits for a transaction open on ${read.topic} on cluster ${read.cluster} (${shown}${more}), held for ${heldFor}; ` +
    `gives up after ${formatSeconds(read.timeoutMs / 1000)} and tries again. The log's warning names the producer and the kafka-transactions.sh lines that end it.`
}
