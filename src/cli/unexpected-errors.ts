/**
 * Errors nobody caught: an exception thrown from a timer or an event handler, a rejected promise nobody awaits.
 * Each is a bug in kmirror or in a library. Node would print it itself, bypassing the redacted
 * `process.stderr.write` (and so showing any secret the message quotes); instead kmirror reports it as an
 * internal error through the redacted stream and exits at once: 3 while `kmirror run` has not finished starting,
 * 4 otherwise. A running replication is not stopped cleanly: the records after its last stored position are
 * copied again at the next start (at-least-once, as after a crash).
 */
import { inspect } from 'node:util'
import { ErrorCodes, ExitCodes, isInternalError, isKmirrorError } from '../errors.ts'
import { processRedactor, type Redactor } from '../redactor.ts'

// Defined in errors.ts: runtime/ code that reports failures as results rethrows bugs with it, and must not import cli/.
export { isInternalError }

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

/**
 * How every command but `run` ends on an error that is not bad input: a bug (`isInternalError`) is reported as
 * one, exit 4; anything else (a cluster out of reach, a refused grant, a timeout) is `kmirror: WHAT: <message>
 * (<code>)<suffix>` (without `WHAT: ` when empty), exit 3.
 */
export function reportCommandFailure (err: unknown, what: string, suffix = ''): number {
  if (isInternalError(err)) {
    process.stderr.write(`${describeUnexpectedError(err)}\n`)
    return ExitCodes.RUNTIME_FAILURE
  }
  process.stderr.write(`kmirror: ${what === '' ? '' : `${what}: `}${err instanceof Error ? err.message : String(err)}${isKmirrorError(err) ? ` (${err.code})` : ''}${suffix}\n`)
  return ExitCodes.START_FAILED
}
