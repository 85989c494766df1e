/**
 * One root pino logger, JSON to stderr (stdout is kept for command output). Components get child loggers
 * bound to `{ flow }` or `{ flow, job }`; steady state logs nothing above debug.
 */
import { writeSync } from 'node:fs'
import { pino, type DestinationStream, type Logger } from 'pino'
import { processRedactor, type Redactor } from './redactor.ts'

export type { Logger }

/** Every line is redacted by `redactor` (the process's by default) before it is written. */
export function createLogger (level: string = process.env['KMIRROR_LOG_LEVEL'] ?? 'info', redactor: Redactor = processRedactor, destination: DestinationStream = stderrSync()): Logger {
  // errWithCause: a wrapped error's cause is logged as its own object; the default serializer appends every
  // cause's message to the message, so a message that already names its cause read twice.
  return pino({ level, base: { name: 'kmirror' }, serializers: { err: pino.stdSerializers.errWithCause } }, redacting(destination, redactor))
}

/** The line with every secret the redactor knows replaced: also in error messages and causes the line quotes. */
function redacting (destination: DestinationStream, redactor: Redactor): DestinationStream {
  return { write: (line: string) => destination.write(redactor.redact(line)) }
}

/** A logger that drops everything, for unit tests and library use. */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Writes each line to stderr before returning, so nothing is lost when the process exits. Written here rather
 * than with `pino.destination({ sync: true })`: stderr is often a non-blocking pipe (a supervisor, a test
 * harness), and when its reader is a little behind that destination sleeps 100 ms per EAGAIN, which made the
 * 500 "created remote topic" lines of a start take 200-300 ms. This one waits 1 ms and tries again. A line
 * that cannot be written for another reason (stderr closed) is dropped: logging must not stop replication.
 */
export function stderrSync (fd = 2): DestinationStream {
  return {
    write (line: string): void {
      let buffer = Buffer.from(line, 'utf8')
      while (buffer.length > 0) {
        try {
          buffer = buffer.subarray(writeSync(fd, buffer))
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return
          Atomics.wait(pause, 0, 0, 1)
        }
      }
    }
  }
}
