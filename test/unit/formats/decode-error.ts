import assert from 'node:assert/strict'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'

/** Asserts that `fn` throws kmirror's DECODE error with a message matching `message`. */
export function assertDecodeError (fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.DECODE)
    assert.match(err.message, message)
    return true
  })
}
