/**
 * How problems and warnings quote a value. A value written in the file is quoted as JSON; a value that came
 * from a config provider is a secret, so messages name the reference it was written with instead
 * (`not the value of ${env:FETCH_BYTES}`) and say nothing derived from it.
 */
import { findReferences } from './references.ts'

export interface Quoted {
  /** What the message shows for the value: `"lots"`, or `the value of ${env:X}`. */
  readonly text: string
  /** True when the value came from a config provider: the message must not show anything derived from it. */
  readonly hidden: boolean
}

/** Quotes values by key; `written` holds the keys whose value has references, with the value as written. */
export type Quote = (key: string, value: string) => Quoted

export function quoteWith (written: ReadonlyMap<string, string>): Quote {
  return (key, value) => {
    const asWritten = written.get(key)
    return asWritten === undefined ? { text: JSON.stringify(value), hidden: false } : { text: `the value of ${showReferences(asWritten)}`, hidden: true }
  }
}

/** Values quoted as they are: for callers without config providers (tests, single values). */
export const quoteLiterally: Quote = (_key, value) => ({ text: JSON.stringify(value), hidden: false })

/** `${env:X}` when the value is exactly one reference, else the whole value as written, quoted. */
function showReferences (written: string): string {
  const [only] = findReferences(written)
  return only !== undefined && only.text === written ? written : JSON.stringify(written)
}
