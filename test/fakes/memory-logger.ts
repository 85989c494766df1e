/** A real pino logger whose JSON lines are kept in memory, so tests can assert what was logged and at which level. */
import { pino } from 'pino'
import type { Logger } from '../../src/logger.ts'

export const LogLevels = { debug: 20, info: 30, warn: 40, error: 50 } as const

export interface LogLine {
  readonly level: number
  readonly msg: string
  readonly [field: string]: unknown
}

export interface MemoryLogger {
  readonly log: Logger
  readonly lines: LogLine[]
  /** The lines logged at exactly `level`. */
  at (level: number): LogLine[]
}

export function memoryLogger (level = 'debug'): MemoryLogger {
  const lines: LogLine[] = []
  // pino writes each line synchronously to a destination that only has `write`.
  const log = pino({ level }, { write: (line: string) => { lines.push(JSON.parse(line) as LogLine) } })
  return { log, lines, at: l => lines.filter(line => line.level === l) }
}
