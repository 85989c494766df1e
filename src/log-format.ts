/**
 * The two shapes of kmirror's log lines (`--log-format`): `json` (one JSON object per line, for log shippers:
 * `"level":"info"`, `"time":"<ISO-8601>"`) and `text` (one readable line per entry, for a terminal):
 *
 *   2026-12-02T02:10:00.123Z WARN  [A->B refresh-topics] cannot list topics on cluster A attempt=2 err="TIMEOUT: ..."
 *
 * The text line is written from the finished (already redacted) JSON line, so both show exactly the same fields.
 */
export const LogFormats = { JSON: 'json', TEXT: 'text' } as const
export type LogFormat = (typeof LogFormats)[keyof typeof LogFormats]

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export function isLogLevel (value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value)
}

/** Fields every line has, shown in the line's head (or not at all) rather than as `key=value`. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname', 'flow', 'job'])

/** One JSON log line as one text line (with its newline); a line that is not JSON is kept as it is. */
export function jsonLineToText (line: string): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  const context = [entry['flow'], entry['job']].filter(v => typeof v === 'string').join(' ')
  const parts = [
    String(entry['time'] ?? ''),
    String(entry['level'] ?? '').toUpperCase().padEnd(5),
    ...(context === '' ? [] : [`[${context}]`]),
    String(entry['msg'] ?? '')
  ]
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue
    parts.push(`${key}=${key === 'err' ? describeError(value) : formatValue(value)}`)
  }
  return `${parts.join(' ')}\n`
}

function formatValue (value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return JSON.stringify(value) ?? String(value)
}

/** A serialized error as `"CODE: message (cause: ...)"`, on one line (no stack: the JSON format keeps it). */
function describeError (value: unknown): string {
  const messages: string[] = []
  let current: unknown = value
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const err = current as Record<string, unknown>
    const code = typeof err['code'] === 'string' ? `${err['code']}: ` : ''
    if (typeof err['message'] === 'string') messages.push(`${code}${err['message']}`)
    else if (code !== '') messages.push(code.slice(0, -2))
    current = err['cause']
  }
  return JSON.stringify(messages.join(' (cause: ') + ')'.repeat(Math.max(0, messages.length - 1)))
}
