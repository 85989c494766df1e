import { ErrorCodes, KmirrorError } from '../errors.ts'

/**
 * kmirror's engine keeps offsets as JavaScript numbers: exact up to 2^53 - 1, which no real partition
 * reaches (a million records a second for 285 years). The conversion is checked so that a value beyond
 * that fails loudly instead of silently losing precision.
 */
export function toOffset (value: bigint): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) {
    throw new KmirrorError(ErrorCodes.INTERNAL, `offset ${value} is beyond ${Number.MAX_SAFE_INTEGER}, the largest offset kmirror supports`)
  }
  return n
}
