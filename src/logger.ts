/**
 * One root pino logger to stderr (stdout is kept for command output): JSON lines with level names and ISO-8601
 * times, or readable text lines for a terminal (log-format.ts). Components get child loggers bound to `{ flow }`
 * or `{ flow, job }`; steady state logs nothing above debug.
 */
import { writeSync } from 'node:fs'
import { pino, type DestinationStream, type Logger } from 'pino'
import { jsonLineToText, LogFormats, type LogFormat } from './log-format.ts'
import { processRedactor, type Redactor } from './redactor.ts'

export type { Logger }

/**
 * Every line is redacted by `redactor` (the process's by default) before it is serialized, whatever escaping
 * follows: the message, the logged object, errors (message, stack, every cause: pino's serialized errors are
 * copied into plain objects first, which the redactor walks) and child bindings (flow and job names: pino
 * serializes them when the child is made). Then the finished line once more, for the secrets long enough to be
 * searched anywhere (a short one there would match numbers of the line, see Redactor.redactSerialized).
 */
export function createLogger (level: string = process.env['KMIRROR_LOG_LEVEL'] ?? 'info', redactor: Redactor = processRedactor, destination: DestinationStream = stderrSync(), format: LogFormat = LogFormats.JSON): Logger {
  const redacted = (value: unknown): Record<string, unknown> => redactor.redactValue(value) as Record<string, unknown>
  const logger = pino({
    level,
    base: { name: 'kmirror' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: label => ({ level: label }), log: redacted },
    serializers: {
      // errWithCause: a wrapped error's cause is logged as its own object; the default serializer appends every
      // cause's message to the message, so a message that already names its cause read twice.
      err: (err: Error) => redactor.redactValue(withoutRepeats(plainError(pino.stdSerializers.errWithCause(err)))),
      msg: (msg: unknown) => redactor.redactValue(msg)
    }
  }, redacting(destination, redactor, format))
  // A child's bindings are serialized when it is made, without the formatters: redact them before. Every child
  // inherits this `child` (pino makes a child with Object.create(parent)), so grandchildren are covered too.
  const child = logger.child
  logger.child = function (this: Logger, bindings: Record<string, unknown>, options?: object) {
    return child.call(this, redacted(bindings), options)
  } as Logger['child']
  return logger
}

/** The prototype of pino's serialized errors (not Object.prototype: the redactor would not look inside). */
const SERIALIZED_ERROR: unknown = Object.getPrototypeOf(pino.stdSerializers.errWithCause(new Error('probe')))

/**
 * A serialized error as plain objects: the error, its cause, its aggregated errors and any error-valued property,
 * each with its own enumerable properties (what JSON shows), so the redactor walks every message and stack.
 */
function plainError (value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value !== 'object' || value === null || seen.has(value)) return value
  seen.add(value)
  if (Array.isArray(value)) return value.map(item => plainError(item, seen))
  if (Object.getPrototypeOf(value) !== SERIALIZED_ERROR) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainError(item, seen)]))
}

/**
 * A serialized error that says each message once: a cause whose message the error's own message already holds
 * (kmirror's messages name their cause) keeps its type, code and the frames of its stack, without the message.
 * Each level compares with the messages above it. The logged error's own stack stays as Node writes it.
 */
export function withoutRepeats (value: unknown, above = ''): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const error = { ...(value as Record<string, unknown>) }
  const message = typeof error['message'] === 'string' ? error['message'] : ''
  if (message.length > 0 && above.includes(message)) {
    delete error['message']
    if (typeof error['stack'] === 'string') error['stack'] = framesOf(error['stack'], message)
  }
  const shown = error['message'] === undefined ? above : `${above}\n${message}`
  if (error['cause'] !== undefined) error['cause'] = withoutRepeats(error['cause'], shown)
  if (Array.isArray(error['aggregateErrors'])) error['aggregateErrors'] = error['aggregateErrors'].map(e => withoutRepeats(e, shown))
  return error
}

/** The stack without its leading "Type: message" lines (a message may span lines). */
function framesOf (stack: string, message: string): string {
  const at = stack.indexOf(message)
  const rest = at >= 0 && at < 200 ? stack.slice(at + message.length) : stack
  return rest.replace(/^\s*\n/, '')
}

function redacting (destination: DestinationStream, redactor: Redactor, format: LogFormat): DestinationStream {
  if (format === LogFormats.TEXT) return { write: (line: string) => destination.write(redactor.redactSerialized(jsonLineToText(redactor.redactSerialized(line)))) }
  return { write: (line: string) => destination.write(redactor.redactSerialized(line)) }
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
