/**
 * `${provider:[path:]key}` references in property values, found and replaced as Kafka's ConfigTransformer does:
 * its pattern, matched left to right, in one pass (a resolved value is never searched again).
 */

/** ConfigTransformer.DEFAULT_PATTERN (Kafka 3.x and later), unchanged. */
const REFERENCE = /\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}/g

export interface Reference {
  /** The reference as written: `${file:/etc/kafka/secrets.properties:password}`. */
  readonly text: string
  readonly provider: string
  /** Empty when the reference has no path (`${env:VAR}`). */
  readonly path: string
  readonly key: string
}

export function findReferences (value: string): Reference[] {
  return [...value.matchAll(REFERENCE)].map(match => ({
    text: match[0],
    provider: match[1] ?? '',
    path: match[3] ?? '',
    key: match[4] ?? ''
  }))
}

/**
 * VALUE with each reference replaced by `lookup(reference)`; a reference it returns undefined for stays as
 * written (as in Kafka). Replacements are not searched for references again.
 */
export function replaceReferences (value: string, lookup: (reference: Reference) => string | undefined): string {
  return value.replace(REFERENCE, (text: string, provider: string | undefined, _withColon: string | undefined, path: string | undefined, key: string | undefined) =>
    lookup({ text, provider: provider ?? '', path: path ?? '', key: key ?? '' }) ?? text)
}
