/**
 * A command's `--timeout`: it covers every cluster the command talks to. Every client's request and connection
 * timeouts are capped to a third of it, at least 10 s (client-options.ts), so a broker that never answers costs one
 * attempt and the retry still fits, and one that never comes back fails the command within
 * `--timeout` with an error naming the cluster, the broker and the request. The whole command is bounded too,
 * by twice `--timeout` plus a small margin: failover may wait `--timeout` for a source that is down and then still
 * read the target, and the client library retries some requests; past that bound kmirror exits 3 with
 * KMIRROR_ERR_TIMEOUT.
 */
import { ErrorCodes, ExitCodes } from '../errors.ts'
import { capClientTimeouts } from '../kafka/client-options.ts'

/** Time given after `--timeout` for the last request's error to be reported and the clients closed. */
export const DEADLINE_MARGIN_MS = 2000

/** Parses `--timeout`; undefined (after printing why) when it is not a number of seconds above 0. */
export function parseTimeoutSeconds (value: string): number | undefined {
  const seconds = Number(value)
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds > 0) return seconds
  process.stderr.write(`kmirror: --timeout must be a number of seconds above 0, got '${value}'\n`)
  return undefined
}

/** Runs COMMAND's body within twice `--timeout` plus the margin; exits 3 with a TIMEOUT message when it does not finish. */
export async function withCommandDeadline (command: string, value: string, body: (timeoutMs: number) => Promise<number>): Promise<number> {
  const seconds = parseTimeoutSeconds(value)
  if (seconds === undefined) return ExitCodes.BAD_INPUT
  const ms = Math.round(seconds * 1000)
  capClientTimeouts(ms)
  const timer = setTimeout(() => {
    process.stderr.write(`kmirror: ${command} did not finish within twice --timeout ${seconds} s: a cluster it talks to accepts connections but does not answer ` +
      `(see any message above for the cluster and broker); check the brokers, or give a longer --timeout (${ErrorCodes.TIMEOUT})\n`)
    process.exit(ExitCodes.START_FAILED)
  }, 2 * ms + DEADLINE_MARGIN_MS)
  try {
    return await body(ms)
  } finally {
    clearTimeout(timer)
  }
}
