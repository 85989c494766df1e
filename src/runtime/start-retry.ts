/**
 * Start-up that waits out transient faults, as MM2's workers do: a flow whose start failed on something time
 * can fix (connection refused or closed, a broker not answering in time, a coordinator loading, a leader moving)
 * is started again with exponential back-off until `start.retry.timeout.ms` has passed; each wait is logged with
 * its cause (which names the cluster and brokers), the attempt and the next delay. Faults waiting cannot fix
 * (authentication, authorization, configuration, an incompatible broker, a bug) end the start at once.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ErrorCodes, isKmirrorError, isRetriable, type ErrorCode } from '../errors.ts'
import { isConfigurationCause } from '../kafka/connection-hints.ts'
import { isNetworkError } from '../kafka/errors.ts'
import type { Logger } from '../logger.ts'

/** Codes no amount of waiting fixes, whatever the error says about retrying. */
const PERMANENT: ReadonlySet<ErrorCode> = new Set([
  ErrorCodes.AUTHENTICATION, ErrorCodes.NOT_AUTHORIZED, ErrorCodes.CONFIG_INVALID, ErrorCodes.USAGE,
  ErrorCodes.BROKER_INCOMPATIBLE, ErrorCodes.INTERNAL
])

export const START_BACKOFF = Object.freeze({ initialMs: 500, maxMs: 15_000 })

/**
 * Consecutive attempts a TLS listener may close without a word before start-up gives up: a broker restarting
 * closes connections for a moment, then refuses them; a listener that wants a client certificate closes them
 * every time (under TLS 1.3 nothing else tells the two apart).
 */
export const TLS_CLOSE_LIMIT = 3

function isClosedOnTls (err: unknown): boolean {
  return isKmirrorError(err) && err.details.closedOnTls === true
}

/** Kafka errors that name a setting or a grant to fix, whatever error code carries them. */
const PERMANENT_KAFKA_ERRORS = new Set(['SASL_AUTHENTICATION_FAILED', 'ILLEGAL_SASL_STATE', 'UNSUPPORTED_SASL_MECHANISM', 'UNSUPPORTED_VERSION', 'POLICY_VIOLATION', 'INVALID_REPLICATION_FACTOR', 'INVALID_CONFIG'])

/**
 * Whether a start that failed with ERR may succeed if tried again later: a retriable error whose code, Kafka
 * errors and connection cause name nothing to fix (a TLS verification failure or a wrong password stays wrong).
 */
export function isTransientStartFault (err: unknown): boolean {
  if (isConfigurationCause(err)) return false
  if (isKmirrorError(err)) {
    const names = Array.isArray(err.details.kafkaErrors) ? err.details.kafkaErrors as unknown[] : []
    const fixable = names.some(n => typeof n === 'string' && (PERMANENT_KAFKA_ERRORS.has(n) || n.endsWith('_AUTHORIZATION_FAILED')))
    return err.retriable && !PERMANENT.has(err.code) && !fixable
  }
  return isRetriable(err) || isNetworkError(err)
}

/** The wait before attempt `attempt + 1` (attempt counts from 1): 500 ms, 1 s, 2 s, ... up to 15 s. */
export function startBackoffMs (attempt: number): number {
  return Math.min(START_BACKOFF.maxMs, START_BACKOFF.initialMs * 2 ** Math.min(attempt - 1, 10))
}

export interface StartRetryOptions {
  /** How long to keep trying, from the first attempt (`start.retry.timeout.ms`); 0 = one attempt. */
  readonly timeoutMs: number
  readonly log: Logger
  /** Aborted when kmirror is asked to stop: no further attempt, the current wait ends. */
  readonly signal: AbortSignal
  /** Undoes a failed attempt (closes the clients it opened) before the wait. */
  readonly cleanUp: () => Promise<void>
  readonly now?: () => number
}

/**
 * Runs `attempt` until it succeeds, fails with a permanent fault, the time is up, or `signal` aborts; rejects with
 * the last error (or the abort reason). Each wait is logged as a warning.
 */
export async function startWithRetries (attempt: () => Promise<void>, options: StartRetryOptions): Promise<void> {
  const now = options.now ?? Date.now
  const startedAt = now()
  let tlsCloses = 0
  for (let n = 1; ; n++) {
    try {
      await attempt()
      if (n > 1) options.log.info({ attempts: n, waitedMs: now() - startedAt }, 'started after waiting for a transient fault to clear')
      return
    } catch (err) {
      await options.cleanUp()
      if (options.signal.aborted) throw options.signal.reason
      const waitedMs = now() - startedAt
      const nextDelayMs = Math.min(startBackoffMs(n), options.timeoutMs - waitedMs)
      tlsCloses = isClosedOnTls(err) ? tlsCloses + 1 : 0
      if (!isTransientStartFault(err) || nextDelayMs <= 0 || tlsCloses >= TLS_CLOSE_LIMIT) throw err
      options.log.warn({ err, attempt: n, waitedMs, nextDelayMs, limitMs: options.timeoutMs },
        `start failed on a transient fault (err); trying again in ${nextDelayMs} ms, for up to start.retry.timeout.ms = ${options.timeoutMs}`)
      await delay(nextDelayMs, undefined, { signal: options.signal }).catch(() => undefined)
      if (options.signal.aborted) throw options.signal.reason
    }
  }
}
