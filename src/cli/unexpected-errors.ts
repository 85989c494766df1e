/**
 * Errors nobody caught: an exception thrown from a timer or an event handler, a rejected promise nobody awaits.
 * Each is a bug in kmirror or in a library. Node would print it itself, bypassing the redacted
 * `process.stderr.write` (and so showing any secret the message quotes); instead kmirror reports it as an
 * internal error through the redacted stream and exits at once: 3 while `kmirror run` has not finished starting,
 * 4 otherwise. A running replication is not stopped cleanly: the records after its last stored position are
 * copied again at the next start (at-least-once, as after a crash).
 */
import { inspect } from 'node:util'
import { ErrorCodes, ExitCodes } from '../errors.ts'
import { processRedactor, type Redactor } from '../redactor.ts'

let exitCode: number = ExitCodes.RUNTIME_FAILURE

/** The exit code an unexpected error gets from now on (`kmirror run`: START_FAILED until every flow started). */
export function setUnexpectedErrorExitCode (code: number): void {
  exitCode = code
}

/** Installs the handlers; process.stdout and process.stderr must already redact (redactWrites). */
export function exitOnUnexpectedErrors (): void {
  process.on('uncaughtException', err => exitUnexpectedly(err))
  process.on('unhandledRejection', reason => exitUnexpectedly(reason))
}

function exitUnexpectedly (err: unknown): never {
  process.stderr.write(`${describeUnexpectedError(err)}\n`)
  process.exit(exitCode)
}

/**
 * `kmirror: unexpected error, please report it (KMIRROR_ERR_INTERNAL): <stack, and each cause's>`. A value thrown
 * or rejected that is no Error is redacted (by `redactor`) before `inspect` quotes it: inspect escapes quotes and
 * newlines in its own way, so a secret holding them would no longer be found in the printed text.
 */
export function describeUnexpectedError (err: unknown, redactor: Redactor = processRedactor): string {
  return `kmirror: unexpected error, please report it (${ErrorCodes.INTERNAL}): ${errorChain(err, redactor)}`
}

function errorChain (err: unknown, redactor: Redactor): string {
  const parts: string[] = []
  let current: unknown = err
  // A cause chain is short; the bound only guards against a cycle.
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    parts.push(current instanceof Error ? (current.stack ?? `${current.name}: ${current.message}`) : inspect(redactor.redactValue(current), { depth: 2 }))
    current = current instanceof Error ? current.cause : undefined
  }
  return parts.join('\ncaused by: ')
}
