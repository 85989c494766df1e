/**
 * Which values of a configuration are secrets, decided once after loading, whatever the keys are called, and
 * how sure that is (the Redactor hides certain secrets however short, guessed ones only when long enough):
 * - certain: values of password keys (the Java client's PASSWORD type: `sasl.jaas.config`, `ssl.*.password`,
 *   ...) under any prefix (`A.`, `A.consumer.`, `A->B.source.admin.`) and of unknown keys a typo away from one
 *   (`sasl.jaas.confg`, `ssl.keystore.pasword`); the option values inside any JAAS login line
 *   (`... required username="u" password="p";`), whatever its key, except options known to be harmless
 *   (username, serviceName, ...); PEM private keys, whatever their key; the user info and query of any URL
 *   value (`https://id:secret@idp/token?client_secret=x`: the token endpoint); every value a config provider
 *   returned (resolve-references.ts), except into keys whose values are numbers, flags or choices (below);
 * - guessed: values of other keys whose name says secret (`my.api.secret`, `db.passwd`), and provider values
 *   resolved into numbers, flags and choices (`A->B.replication.factor = ${env:RF}`): such a value is data, and
 *   hiding every `3` of the output would hide offsets and counts;
 * - never: `clusters`, whose aliases every message names.
 * The process's Redactor hides all of them wherever text leaves the process; `kmirror validate` additionally
 * redacts per key (`redactValue`).
 */
import { REDACTED, type SecretValues } from '../redactor.ts'
import { findKey, JAVA_PASSWORD_KEYS, JAVA_SECURITY_KEYS, KEYS, KeyTypes, type KeyType } from './schema.ts'
import { jaasOptionTexts, parseJaasConfig, type JaasOptionText } from './jaas.ts'
import { findReferences, replaceReferences } from './references.ts'
import { closest, levenshtein } from './suggest.ts'

/**
 * JAAS options that name things or tune the login rather than prove identity; every other option value is
 * hidden (a certain secret: hidden however short, so a harmless `unsecuredLoginLifetimeSeconds="3600"` among
 * them would blank every 3600 of the output).
 */
const PUBLIC_JAAS_OPTIONS = new Set([
  'username', 'user', 'serviceName', 'principal', 'debug', 'clientId', 'scope',
  // SCRAM delegation tokens: a flag (the token itself is the password)
  'tokenauth',
  // Kerberos (Krb5LoginModule): where the keys are and how to use them
  'useKeyTab', 'keyTab', 'storeKey', 'useTicketCache', 'ticketCache', 'renewTGT', 'doNotPrompt', 'isInitiator',
  'refreshKrb5Config', 'tryFirstPass', 'useFirstPass', 'storePass', 'clearPass',
  // Java's unsecured OAUTHBEARER tokens (anyone can write them: their claims prove nothing) and their validator
  'unsecuredLoginLifetimeSeconds', 'unsecuredLoginPrincipalClaimName', 'unsecuredLoginScopeClaimName',
  'unsecuredValidatorPrincipalClaimName', 'unsecuredValidatorScopeClaimName', 'unsecuredValidatorRequiredScope',
  'unsecuredValidatorAllowableClockSkewMs',
  // The token endpoint's TLS settings (oauth-options.ts): where the stores are, not what opens them.
  'ssl.truststore.location', 'ssl.truststore.type', 'ssl.keystore.location', 'ssl.keystore.type', 'ssl.endpoint.identification.algorithm',
  'ssl.protocol', 'ssl.enabled.protocols', 'ssl.cipher.suites', 'ssl.provider', 'ssl.keymanager.algorithm', 'ssl.trustmanager.algorithm'
])
/** Families of public JAAS options: the unsecured token's claims (`unsecuredLoginNumberClaim_exp_skew`, ...). */
const PUBLIC_JAAS_OPTION_PREFIXES = ['unsecuredLoginStringClaim_', 'unsecuredLoginNumberClaim_', 'unsecuredLoginListClaim_']

function isPublicJaasOption (name: string): boolean {
  return PUBLIC_JAAS_OPTIONS.has(name) || PUBLIC_JAAS_OPTION_PREFIXES.some(prefix => name.startsWith(prefix))
}
const JAAS_LINE = /^\s*[\w.$]+\s+(required|requisite|sufficient|optional)\b/i
const JAAS_OPTION = /([\w.-]+)(\s*=\s*)("(?:[^"\\]|\\.)*"|[^\s;"]+)/g
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/
/**
 * A URL value: scheme, user info (group 1, up to the last `@` before the path, as URL parsers read it: a password
 * may hold a raw `@`), host and path, query (group 2, without `?`), fragment.
 */
const URL_PARTS = /^\s*[a-z][a-z0-9+.-]*:\/\/(?:([^/?#\s]*)@)?[^?#\s]*(?:\?([^#\s]*))?(?:#\S*)?\s*$/i
/** Words that make a key name secret, matched per name segment with a typo or two allowed for long ones. */
const SECRET_WORDS = ['password', 'passwd', 'passphrase', 'secret', 'credentials', 'credential', 'jaas', 'token', 'apikey', 'userinfo', 'privatekey', 'accesskey']
/**
 * Short words that make a key name secret only as a whole word of its last segment (`db.pwd`, `api.key`,
 * `api_key`; not `bypass`, `keystore`, `key.deserializer`).
 */
const SECRET_WHOLE_WORDS = new Set(['pwd', 'pw', 'pass', 'key'])

let knownNames: ReadonlySet<string> | undefined
let passwordNames: ReadonlySet<string> | undefined

function known (): ReadonlySet<string> {
  knownNames ??= new Set([...KEYS.map(spec => spec.name), ...JAVA_SECURITY_KEYS])
  return knownNames
}

function passwords (): ReadonlySet<string> {
  passwordNames ??= new Set([
    ...JAVA_PASSWORD_KEYS,
    ...KEYS.filter(spec => spec.type === KeyTypes.PASSWORD && !spec.name.includes('certificate')).map(spec => spec.name)
  ])
  return passwordNames
}

/**
 * Whether the whole value of KEY (as written, with any prefix) is secret, and how sure that is. The cluster alias
 * or flow prefix (`A.`, `A->B.`, with ALIASES) is left out first: an alias names a cluster and says nothing about
 * a value (`SECRETDC.bootstrap.servers` is an address). The rest is tried from each of its segments on
 * (`consumer.ssl.key.password` → `ssl.key.password` → ...): a known password key makes it certainly secret; a
 * known other key leaves only the segments before it to judge (`db.secret.name` is guessed secret although
 * `name` is a known key). An unknown key is certainly secret when it is a typo away from a password key, and
 * guessed secret when a segment is (close to) a secret word.
 */
export function secretKeyKind (key: string, aliases: readonly string[] = []): SecretKind | undefined {
  const segments = withoutAlias(key, aliases).split('.')
  const unknownSuffixes: string[] = []
  for (let i = 0; i < segments.length; i++) {
    const suffix = segments.slice(i).join('.')
    if (known().has(suffix)) {
      if (passwords().has(suffix)) return SecretKinds.CERTAIN
      return hasSecretWord(segments.slice(0, i)) ? SecretKinds.GUESSED : undefined
    }
    unknownSuffixes.push(suffix)
  }
  // A typo away from a password key is a password key: hiding a value too many is harmless.
  if (unknownSuffixes.some(suffix => suffix.includes('.') && closest(suffix, passwords()) !== undefined)) return SecretKinds.CERTAIN
  return hasSecretWord(segments) ? SecretKinds.GUESSED : undefined
}

/** KEY without a leading `S->T.` (aliases of ALIASES, or any without dots) or `A.` of an alias of ALIASES. */
function withoutAlias (key: string, aliases: readonly string[]): string {
  for (const source of aliases) {
    for (const target of aliases) {
      if (key.startsWith(`${source}->${target}.`)) return key.slice(`${source}->${target}.`.length)
    }
  }
  const flow = /^[^.]+->[^.]+\./.exec(key)
  if (flow !== null) return key.slice(flow[0].length)
  const alias = aliases.filter(a => key.startsWith(`${a}.`)).sort((a, b) => b.length - a.length)[0]
  return alias === undefined ? key : key.slice(alias.length + 1)
}

export const SecretKinds = { CERTAIN: 'certain', GUESSED: 'guessed' } as const
export type SecretKind = (typeof SecretKinds)[keyof typeof SecretKinds]

export function isSecretKey (key: string, aliases: readonly string[] = []): boolean {
  return secretKeyKind(key, aliases) !== undefined
}

/**
 * Whether a segment, a word of it (split at `-` and `_`), its words run together (`api_key` → `apikey`) or two
 * segments run together (`user.info` → `userinfo`) is a secret word.
 */
function hasSecretWord (segments: readonly string[]): boolean {
  const wordsOf = (segment: string): string[] => {
    const parts = segment.split(/[-_]/)
    return [...parts, parts.join('')]
  }
  const pairs = segments.slice(1).map((segment, i) => `${segments[i]!}${segment}`)
  const last = segments.at(-1)
  return segments.flatMap(wordsOf).some(isSecretWord) || pairs.some(isSecretWord) ||
    (last !== undefined && last.split(/[-_]/).some(w => SECRET_WHOLE_WORDS.has(w.toLowerCase())))
}

function isSecretWord (word: string): boolean {
  const lower = word.toLowerCase()
  return SECRET_WORDS.some(secret => lower.includes(secret) || (lower.length >= 5 && levenshtein(lower, secret) <= (secret.length >= 8 ? 2 : 1)))
}

export function looksLikeJaas (value: string): boolean {
  return JAAS_LINE.test(value) || 'entries' in parseJaasConfig(value)
}

/** An option value as written, without its quotes (an unclosed quote runs to the end of its line). */
function writtenValue (value: string, option: JaasOptionText): string {
  const written = value.slice(option.start, option.end)
  if (!/^["']/.test(written)) return written
  return written.length > 1 && written.endsWith(written[0] as string) ? written.slice(1, -1) : written.slice(1)
}

/**
 * The secret option values of a JAAS line, without their quotes (the Redactor finds `"ab"` through `ab`: a quote
 * ends a whole token), as written and, when that differs, unescaped (`p\"w` and `p"w`).
 */
function jaasSecrets (value: string): string[] {
  const secrets: string[] = []
  for (const match of value.matchAll(JAAS_OPTION)) {
    const [, name = '', , written = ''] = match
    if (isPublicJaasOption(name) || written === '') continue
    const bare = written.startsWith('"') ? written.slice(1, -1) : written
    const unescaped = bare.replace(/\\(.)/g, '$1')
    secrets.push(...new Set([bare, unescaped]))
  }
  // As Java reads it too: single quotes, blanks inside quotes, octal and \t escapes, comments between options.
  for (const option of jaasOptionTexts(value)) {
    if (!isPublicJaasOption(option.name)) secrets.push(...new Set([option.value, writtenValue(value, option)]))
  }
  return secrets.filter(secret => secret !== '')
}

/** Types whose values are data, never credentials: a provider value resolved into one is only guessed secret. */
const DATA_TYPES: ReadonlySet<KeyType> = new Set([KeyTypes.BOOLEAN, KeyTypes.SHORT, KeyTypes.INT, KeyTypes.LONG, KeyTypes.DOUBLE, KeyTypes.ENUM, KeyTypes.CLASS])

/** The schema type of KEY as written (`A->B.replication.factor` → int), from its longest known suffix. */
function typeOfKey (key: string): KeyType | undefined {
  const segments = key.split('.')
  for (let i = 0; i < segments.length; i++) {
    const spec = findKey(segments.slice(i).join('.'))
    if (spec !== undefined) return spec.type
  }
  return undefined
}

/**
 * Every secret value among the properties (KEY → value as resolved), and among the values config providers
 * returned (KEY → the provider values in its value), for the process's Redactor. A reference left unresolved
 * (reported as a problem) is not a secret: it is what the messages show instead of the value.
 */
export function secretValues (values: Readonly<Record<string, string>>, fromProviders: ReadonlyMap<string, readonly string[]> = new Map(), aliases: readonly string[] = []): SecretValues {
  const certain = new Set<string>()
  const guessed = new Set<string>()
  for (const [key, value] of Object.entries(values)) {
    const kind = PRIVATE_KEY.test(value) ? SecretKinds.CERTAIN : secretKeyKind(key, aliases)
    if (kind !== undefined) (kind === SecretKinds.CERTAIN ? certain : guessed).add(value)
    if (looksLikeJaas(value)) for (const secret of jaasSecrets(value)) certain.add(secret)
    for (const secret of urlSecrets(value)) certain.add(secret)
  }
  for (const [key, provided] of fromProviders) {
    if (key === 'clusters') continue
    const type = typeOfKey(key)
    for (const value of provided) (type !== undefined && DATA_TYPES.has(type) ? guessed : certain).add(value)
  }
  const isSecret = (secret: string): boolean => replaceReferences(secret, () => '').replaceAll('"', '').trim() !== ''
  return {
    certain: [...certain].filter(isSecret),
    guessed: [...guessed].filter(secret => isSecret(secret) && !certain.has(secret))
  }
}

/** The user info (and its password part) and the query of a URL value, which may hold credentials. */
function urlSecrets (value: string): string[] {
  return urlItems(value).flatMap(item => {
    const match = URL_PARTS.exec(item)
    if (match === null) return []
    const [, userInfo, query] = match
    const password = userInfo?.includes(':') === true ? userInfo.slice(userInfo.indexOf(':') + 1) : undefined
    return [userInfo, password, query].filter((part): part is string => part !== undefined && part !== '')
  })
}

/** A URL value (or a comma-separated list of them) with each user info and query replaced; any other value unchanged. */
function redactUrl (value: string): string {
  return urlItems(value).map(redactOneUrl).join(',')
}

/**
 * The URLs of a comma-separated list, split only where another URL starts: a comma inside one (in a password, or
 * a query `ids=1,2`) stays in it.
 */
function urlItems (value: string): string[] {
  return value.split(/,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i)
}

function redactOneUrl (value: string): string {
  const match = URL_PARTS.exec(value)
  if (match === null) return value
  const [, userInfo, query] = match
  let shown = value
  if (userInfo !== undefined && userInfo !== '') shown = shown.replace(`${userInfo}@`, `${REDACTED}@`)
  if (query !== undefined && query !== '') shown = shown.replace(`?${query}`, `?${REDACTED}`)
  return shown
}

/**
 * VALUE as `kmirror validate` may show it for KEY: a JAAS line with its secret options replaced, the whole
 * value of a secret key or a private key replaced, a URL without its user info and query, anything else
 * unchanged (the Redactor then hides values that came from config providers). A value written as references
 * only (`${file:/etc/kafka/pw.properties:pw}`, also a JAAS option's) is shown: it names where the secret is, not
 * the secret.
 */
export function redactValue (key: string, value: string, aliases: readonly string[] = []): string {
  if (looksLikeJaas(value)) {
    let redacted = value
    for (const option of jaasOptionTexts(value).reverse()) {
      if (isPublicJaasOption(option.name) || isOnlyReferences(option.value)) continue
      redacted = `${redacted.slice(0, option.start)}"${REDACTED}"${redacted.slice(option.end)}`
    }
    return redacted.replace(JAAS_OPTION, (whole: string, name: string, equals: string, written: string) =>
      isPublicJaasOption(name) || isOnlyReferences(written.replace(/^"(.*)"$/s, '$1')) || written === `"${REDACTED}"` ? whole : `${name}${equals}"${REDACTED}"`)
  }
  if (isOnlyReferences(value)) return value
  return isSecretKey(key, aliases) || PRIVATE_KEY.test(value) ? REDACTED : redactUrl(value)
}

function isOnlyReferences (value: string): boolean {
  return findReferences(value).length > 0 && replaceReferences(value, () => '').trim() === ''
}
