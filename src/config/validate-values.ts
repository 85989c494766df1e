/**
 * Checks of the values as written: each key is checked where it is written (`A->B.topics`, `topics`,
 * `A.consumer.security.protocol`), so a bad value is reported once, under the key the user has to edit.
 */
import type { ConfigProblem } from '../errors.ts'
import { compileJavaRegexList, JavaRegexError } from '../policy/java-regex.ts'
import { normalizePolicyClass } from './flows.ts'
import { classifyKey, clientKeyOf, flowRestUsage, clusterRestUsage, topLevelUsage, Usages, type KeyShape } from './key-shapes.ts'
import { quoteLiterally, type Quote, type Quoted } from './quoted-values.ts'
import { findKey, KeyTypes, SASL_MECHANISMS, Scopes, STORE_TYPES, type ClientRoleName, type KeySpec } from './schema.ts'
import { IntegerWidths, javaTrim, parseConfigBoolean, parseJavaInteger, splitList } from './values.ts'

type Props = Readonly<Record<string, string>>

const WIDTHS = { [KeyTypes.SHORT]: IntegerWidths.SHORT, [KeyTypes.INT]: IntegerWidths.INT, [KeyTypes.LONG]: IntegerWidths.LONG } as const

/** Problems with the values of RAW; `quote` says how a message may show each one (quoted-values.ts). */
export function validateValues (raw: Props, aliases: readonly string[], quote: Quote = quoteLiterally): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const [key, value] of Object.entries(raw)) {
    const spec = specWhereWritten(classifyKey(key, aliases), key)
    const message = spec === undefined ? undefined : checkValue(spec, value, quote(key, value))
    if (message !== undefined) problems.push({ key, message })
  }
  return problems
}

/** The schema entry that governs `key` where it is written, if kmirror (like MM2) reads it there. */
export function specWhereWritten (shape: KeyShape, key: string): KeySpec | undefined {
  if (shape.kind === 'top-level') return topLevelUsage(key) === Usages.USED ? findKey(key) : undefined
  if (shape.kind === 'flow') {
    if (flowRestUsage(shape.rest) === Usages.USED && findKey(shape.rest)?.scope === Scopes.CONNECTOR) return findKey(shape.rest)
    return clientSpec(shape.rest)
  }
  if (shape.kind === 'cluster') {
    if (clusterRestUsage(shape.rest) === Usages.USED && findKey(shape.rest) !== undefined) return findKey(shape.rest)
    return clientSpec(shape.rest)
  }
  return undefined
}

/** The schema entry of a key under a client prefix: connection keys anywhere, role keys under their role's prefixes. */
export function clientSpec (rest: string): KeySpec | undefined {
  const client = clientKeyOf(rest)
  const spec = client === undefined ? undefined : findKey(client.key)
  if (client === undefined || spec === undefined) return undefined
  if (spec.scope === Scopes.CLUSTER) return spec
  const role = roleOfPrefix(client.prefix)
  return spec.scope === Scopes.CLIENT_ROLE && role !== undefined && spec.roles?.includes(role) === true ? spec : undefined
}

/** `source.consumer.` and `consumer.` → consumer, `producer.override.` → producer; `source.cluster.` → none. */
function roleOfPrefix (prefix: string): ClientRoleName | undefined {
  return (['consumer', 'producer', 'admin'] as const).find(role => prefix === `${role}.` || prefix.endsWith(`.${role}.`) || prefix === `${role}.override.`)
}

/**
 * The problem with `value` for `spec`, as the text after "key: ", or undefined when it is fine. Messages show
 * the value as `shown` says (a value from a config provider as its reference, nothing derived from it).
 */
export function checkValue (spec: KeySpec, value: string, shown: Quoted = { text: JSON.stringify(value), hidden: false }): string | undefined {
  const special = SPECIAL_CHECKS[spec.name]
  if (special !== undefined) return special(value, shown, spec)
  if (spec.regexList === true) return checkRegexList(value, shown)
  switch (spec.type) {
    case KeyTypes.BOOLEAN: return checkBoolean(spec, value, shown)
    case KeyTypes.SHORT: case KeyTypes.INT: case KeyTypes.LONG: return checkInteger(spec, value, shown)
    case KeyTypes.ENUM: return checkEnum(spec, value, shown)
    case KeyTypes.DOUBLE: return checkDouble(spec, value, shown)
    default: return undefined
  }
}

function checkBoolean (spec: KeySpec, value: string, shown: Quoted): string | undefined {
  // `enabled` is read with Boolean.parseBoolean by MM2's driver: anything else means false (warnings.ts says so).
  if (spec.name === 'enabled' || parseConfigBoolean(value) !== undefined) return undefined
  return `must be true or false, not ${shown.text}`
}

function checkInteger (spec: KeySpec, value: string, shown: Quoted): string | undefined {
  const width = WIDTHS[spec.type as keyof typeof WIDTHS]
  const number = parseJavaInteger(value, width)
  if (number === undefined) return `must be a whole number (a Java ${spec.type}), not ${shown.text}`
  if (number === -1 && spec.minusOneMeans !== undefined) return undefined
  const minusOne = spec.minusOneMeans === undefined ? '' : ` (or -1 for ${spec.minusOneMeans})`
  return checkRange(spec, number, minusOne, shown)
}

function checkDouble (spec: KeySpec, value: string, shown: Quoted): string | undefined {
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number)) return `must be a number, not ${shown.text}`
  return checkRange(spec, number, '', shown)
}

/** Java's `ConfigDef.Range`: at least `min`, at most `max` (each when set). */
function checkRange (spec: KeySpec, number: number, alternative: string, shown: Quoted): string | undefined {
  const low = spec.min !== undefined && number < spec.min
  const high = spec.max !== undefined && number > spec.max
  if (!low && !high) return undefined
  const not = shown.hidden ? shown.text : String(number)
  if (spec.min !== undefined && spec.max !== undefined) return `must be from ${spec.min} to ${spec.max}${alternative}, not ${not}`
  return low ? `must be at least ${spec.min ?? ''}${alternative}, not ${not}` : `must be at most ${spec.max ?? ''}, not ${not}`
}

function checkEnum (spec: KeySpec, value: string, shown: Quoted): string | undefined {
  const values = spec.values ?? []
  const written = javaTrim(value)
  const matches = spec.caseInsensitive === true
    ? values.some(v => v.toLowerCase() === written.toLowerCase())
    : values.includes(written)
  // Keys MM2 reads as plain strings only get a warning (warnings.ts).
  if (matches || spec.otherValuesMean !== undefined) return undefined
  return `must be one of ${values.join(', ')}, not ${shown.text}`
}

function checkRegexList (value: string, shown: Quoted): string | undefined {
  try {
    compileJavaRegexList(splitList(value))
    return undefined
  } catch (err) {
    if (!(err instanceof JavaRegexError)) throw err
    // The regex error quotes the pattern: not for a value from a config provider.
    if (shown.hidden) return `${shown.text} is not a list of valid Java regular expressions: fix that value`
    const commaHint = value.includes('{') && value.includes(',')
      ? ' Lists are split at every comma, so a quantifier such as {1,3} cannot be written here.'
      : ''
    return `${err.message}: fix the regular expression.${commaHint}`
  }
}

const SPECIAL_CHECKS: Readonly<Record<string, (value: string, shown: Quoted, spec: KeySpec) => string | undefined>> = {
  'replication.policy.class': (value, shown) => normalizePolicyClass(value) === undefined
    ? `custom replication policy classes are not supported (${shown.text}): use org.apache.kafka.connect.mirror.DefaultReplicationPolicy or org.apache.kafka.connect.mirror.IdentityReplicationPolicy`
    : undefined,
  'replication.policy.separator': value => value === ''
    ? 'must not be empty: remove the key to use the default "."'
    : undefined,
  'bootstrap.servers': checkBootstrapServers,
  'request.timeout.ms': checkRequestTimeout,
  'sasl.mechanism': checkSaslMechanism,
  'ssl.truststore.type': (value, shown) => checkStoreType('ssl.truststore', value, shown),
  'ssl.keystore.type': (value, shown) => checkStoreType('ssl.keystore', value, shown)
}

function checkBootstrapServers (value: string, shown: Quoted): string | undefined {
  const entries = splitList(value)
  if (entries.length === 0) return 'is empty: set it to the host:port list of the cluster'
  const bad = entries.filter(entry => !/^\S+:[0-9]{1,5}$/.test(entry))
  if (bad.length === 0) return undefined
  if (shown.hidden) return `entries must be host:port, and ${shown.text} has some that are not`
  return `entries must be host:port, not ${bad.map(entry => JSON.stringify(entry)).join(', ')}`
}

/** Java accepts 0, and then every request that is not answered within the millisecond it was sent times out. */
function checkRequestTimeout (value: string, shown: Quoted, spec: KeySpec): string | undefined {
  if (parseJavaInteger(value, IntegerWidths.INT) !== 0) return checkInteger(spec, value, shown)
  return `must be at least 1, not ${shown.hidden ? shown.text : 0}: the Java client accepts 0 but then times out every request it sends, so kmirror refuses it (the default is ${spec.default ?? '30000'})`
}

function checkSaslMechanism (value: string, shown: Quoted): string | undefined {
  const mechanism = javaTrim(value)
  if ((SASL_MECHANISMS as readonly string[]).includes(mechanism)) return undefined
  const supported = `kmirror supports ${SASL_MECHANISMS.slice(0, -1).join(', ')} and ${SASL_MECHANISMS.at(-1) ?? ''}`
  if (shown.hidden) return `${shown.text} is not a SASL mechanism kmirror supports (mechanism names are case-sensitive): ${supported}`
  if ((SASL_MECHANISMS as readonly string[]).includes(mechanism.toUpperCase())) {
    return `mechanism names are case-sensitive: write ${mechanism.toUpperCase()}`
  }
  if (mechanism === 'GSSAPI') return `GSSAPI (Kerberos) is not supported: ${supported}`
  if (mechanism === 'AWS_MSK_IAM') return `AWS_MSK_IAM is not supported (it needs the AWS MSK IAM Java library): ${supported}; MSK also offers SCRAM-SHA-512`
  return `${shown.text} is not a SASL mechanism kmirror supports: ${supported}`
}

function checkStoreType (prefix: string, value: string, shown: Quoted): string | undefined {
  if ((STORE_TYPES as readonly string[]).includes(javaTrim(value).toUpperCase())) return undefined
  return `${shown.text} stores are not supported: use ${STORE_TYPES.slice(0, -1).join(', ')} or ${STORE_TYPES.at(-1) ?? ''} (keytool -importkeystore -deststoretype PKCS12 converts other key stores) and set ${prefix}.type accordingly`
}
