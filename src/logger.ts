/**
 * One root pino logger, JSON to stderr (stdout is kept for command output). Components get child loggers
 * bound to `{ flow }` or `{ flow, job }`; steady state logs nothing above debug.
 */
import { pino, type Logger } from 'pino'

export type { Logger }

export function createLogger (level: string = process.env['KMIRROR_LOG_LEVEL'] ?? 'info'): Logger {
  return pino({ level, base: { name: 'kmirror' } }, pino.destination({ fd: 2, sync: true }))
}

/** A logger that drops everything, for unit tests and library use. */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}
