/**
 * Reading a command's configuration input: every command reports a bad file the same way (the problems on
 * stderr, exit code 2, nothing written anywhere).
 */
import { ConfigError, ExitCodes } from '../errors.ts'

export type Loaded<T> = { readonly ok: true, readonly value: T } | { readonly ok: false, readonly exitCode: number }

/** Runs `load`; a ConfigError is printed and becomes exit code 2, anything else propagates. */
export function loadInput<T> (load: () => T): Loaded<T> {
  try {
    return { ok: true, value: load() }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`kmirror: ${err.message}\n`)
    return { ok: false, exitCode: ExitCodes.BAD_INPUT }
  }
}
