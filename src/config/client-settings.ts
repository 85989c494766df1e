/**
 * The Java client settings the data path reads, as typed values: what the user wrote for the role (already
 * checked by validate-values.ts against the schema), else the schema's default. The one place the runtime
 * turns `ClientProps` strings into numbers and choices.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { findKey, KeyTypes, Origins, Scopes, type KeySpec } from './schema.ts'
import type { ClientProps } from './types.ts'
import { IntegerWidths, javaTrim, parseJavaInteger } from './values.ts'

const WIDTHS = { [KeyTypes.SHORT]: IntegerWidths.SHORT, [KeyTypes.INT]: IntegerWidths.INT, [KeyTypes.LONG]: IntegerWidths.LONG } as const

/** A whole-number client setting (`fetch.max.bytes`, `request.timeout.ms`, `sasl.login.read.timeout.ms`, ...). */
export function clientInt (props: ClientProps, key: string): number {
  const spec = clientKeySpec(key)
  const width = WIDTHS[spec.type as keyof typeof WIDTHS]
  if (width === undefined) throw internal(`${key} is not a numeric client setting`)
  const value = parseJavaInteger(props[key] ?? spec.default ?? '', width)
  if (value === undefined) throw invalid(key, props[key])
  return value
}

/** A DOUBLE client setting (`sasl.login.refresh.window.factor`, ...). */
export function clientDouble (props: ClientProps, key: string): number {
  const spec = clientKeySpec(key)
  if (spec.type !== KeyTypes.DOUBLE) throw internal(`${key} is not a DOUBLE client setting`)
  const written = props[key] ?? spec.default ?? ''
  const value = Number(written)
  if (written.trim() === '' || !Number.isFinite(value)) throw invalid(key, props[key])
  return value
}

/** A choice among the schema's values (`isolation.level`, `compression.type`), or undefined when not set and without default. */
export function clientChoice (props: ClientProps, key: string): string | undefined {
  const spec = clientKeySpec(key)
  if (spec.type !== KeyTypes.ENUM) throw internal(`${key} is not a client setting with a list of values`)
  const written = props[key]
  if (written === undefined) return spec.default ?? undefined
  const trimmed = javaTrim(written)
  const match = spec.values?.find(v => spec.caseInsensitive === true ? v.toLowerCase() === trimmed.toLowerCase() : v === trimmed)
  if (match !== undefined) return match
  if (spec.otherValuesMean !== undefined) return spec.otherValuesMean
  throw invalid(key, written)
}

export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'

/** The codec the user asked the producer for, or null when `compression.type` is not set (keep each batch's own). */
export function explicitCompression (producer: ClientProps): Compression | null {
  return (clientChoice(producer, 'compression.type') as Compression | undefined) ?? null
}

export function isolationLevel (consumer: ClientProps): 'read_committed' | 'read_uncommitted' {
  return clientChoice(consumer, 'isolation.level') === 'read_uncommitted' ? 'read_uncommitted' : 'read_committed'
}

export function startPosition (consumer: ClientProps): 'earliest' | 'latest' {
  return clientChoice(consumer, 'auto.offset.reset') === 'latest' ? 'latest' : 'earliest'
}

/** A Java client key of the schema: of a client role, or one every client of a cluster reads (`sasl.login.*`). */
function clientKeySpec (key: string): KeySpec {
  const spec = findKey(key)
  if (spec === undefined || !(spec.scope === Scopes.CLIENT_ROLE || (spec.scope === Scopes.CLUSTER && spec.origin === Origins.CLIENT))) {
    throw internal(`${key} is not a client setting of the schema`)
  }
  return spec
}

function internal (message: string): KmirrorError {
  return new KmirrorError(ErrorCodes.INTERNAL, message)
}

/** Only reachable for properties that did not come through validation (a programmer's ClientProps). */
function invalid (key: string, value: string | undefined): KmirrorError {
  return new KmirrorError(ErrorCodes.CONFIG_INVALID, `${key} = ${JSON.stringify(value)} is not valid: see docs/config.md`)
}
