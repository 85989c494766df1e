/**
 * `sasl.mechanism`, `sasl.jaas.config` and the OAUTHBEARER login keys (as MM2 users write them for the Java
 * client) to the library's SASL options. PLAIN and SCRAM take the JAAS username and password; OAUTHBEARER takes
 * tokens from the client-credentials flow (OAuthBearerLoginCallbackHandler) or, without a login callback handler,
 * Java's unsecured JWS. Authentication failures become KmirrorErrors (AUTHENTICATION) that name the cluster, the
 * mechanism and the user or token URL, never a secret.
 */
import type { ConnectionOptions } from '@platformatic/kafka'
import { saslPlain, saslScramSha } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClientConfigError } from './client-config-error.ts'
import { parseJaas, type JaasEntry } from './jaas.ts'
import { fetchClientCredentialsToken, shownUrl, type ClientCredentials } from './oauth-client-credentials.ts'
import { DEFAULT_REFRESH, TokenCache, type RefreshSettings } from './oauth-token-cache.ts'
import { unsecuredToken } from './oauth-unsecured.ts'

export type SaslOptions = NonNullable<ConnectionOptions['sasl']>

export const SUPPORTED_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const

const OAUTH_PACKAGE = 'org.apache.kafka.common.security.oauthbearer.'
/** The handler that fetches tokens from sasl.oauthbearer.token.endpoint.url, under its 3.4+ and 3.1-3.3 names. */
const SECURED_HANDLERS = [`${OAUTH_PACKAGE}OAuthBearerLoginCallbackHandler`, `${OAUTH_PACKAGE}secured.OAuthBearerLoginCallbackHandler`]
const UNSECURED_HANDLER = `${OAUTH_PACKAGE}internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler`
const RETRIEVERS = [`${OAUTH_PACKAGE}DefaultJwtRetriever`, `${OAUTH_PACKAGE}ClientCredentialsJwtRetriever`, `${OAUTH_PACKAGE}FileJwtRetriever`]

/** The library's SASL options for `props`; `label` (e.g. `cluster A`) names the cluster in errors. */
export function saslOptions (props: ClientProps, label: string): SaslOptions {
  const mechanism = (props['sasl.mechanism'] ?? 'GSSAPI').trim()
  if (mechanism === 'OAUTHBEARER') return oauthOptions(props, label)
  if (mechanism !== 'PLAIN' && mechanism !== 'SCRAM-SHA-256' && mechanism !== 'SCRAM-SHA-512') {
    throw new ClientConfigError('sasl.mechanism', `is ${mechanism}, which kmirror does not support${mechanism === 'GSSAPI' ? ' (GSSAPI is the Java default when sasl.mechanism is not set)' : ''}: use ${SUPPORTED_MECHANISMS.join(', ')}`)
  }
  const jaas = jaasEntry(props, mechanism)
  const username = jaas.options.username
  const password = jaas.options.password
  if (username === undefined || password === undefined) {
    throw new ClientConfigError('sasl.jaas.config', `must name username="..." and password="..." for SASL/${mechanism}`)
  }
  return { mechanism, username, password, authenticate: passwordAuthenticator(label, username) }
}

function jaasEntry (props: ClientProps, mechanism: string): JaasEntry {
  const text = props['sasl.jaas.config']
  if (text === undefined || text.trim() === '') {
    throw new ClientConfigError('sasl.jaas.config', `is not set: SASL/${mechanism} needs a JAAS line such as ${exampleJaas(mechanism)}`)
  }
  const entry = parseJaas(text)
  if (entry === undefined) throw new ClientConfigError('sasl.jaas.config', `is not a JAAS line (<LoginModule> required name="value" ...;), e.g. ${exampleJaas(mechanism)}`)
  return entry
}

function exampleJaas (mechanism: string): string {
  if (mechanism === 'OAUTHBEARER') return `${OAUTH_PACKAGE}OAuthBearerLoginModule required clientId="..." clientSecret="...";`
  const module = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule'
  return `${module} required username="..." password="...";`
}

type Authenticator = NonNullable<SaslOptions['authenticate']>

/** The library's PLAIN/SCRAM exchange, with a refusal turned into an error naming cluster, mechanism and user. */
function passwordAuthenticator (label: string, username: string): Authenticator {
  return (mechanism, connection, authenticate, user, password, _token, callback) => {
    const done: typeof callback = (error, response) => {
      if (error === null || error === undefined) {
        callback(null, response)
        return
      }
      const refused = /SASL_AUTHENTICATION_FAILED/.test(JSON.stringify(errorNames(error)))
      callback(refused
        ? new KmirrorError(ErrorCodes.AUTHENTICATION, `${label} refused SASL/${mechanism} authentication of user ${JSON.stringify(username)} at ${connection.host ?? '?'}:${connection.port ?? '?'}: check the username and password in sasl.jaas.config, and that the user exists for ${mechanism}`, { cause: error, retriable: true })
        : error, response as never)
    }
    if (mechanism === 'PLAIN') saslPlain.authenticate(authenticate, connection, user ?? '', password ?? '', done)
    else saslScramSha.authenticate(authenticate, connection, mechanism === 'SCRAM-SHA-512' ? 'SHA-512' : 'SHA-256', user ?? '', password ?? '', saslScramSha.defaultCrypto, done)
  }
}

function errorNames (error: unknown, depth = 0): string[] {
  if (error === null || typeof error !== 'object' || depth > 6) return []
  const { apiId, errors, cause } = error as { apiId?: unknown, errors?: unknown, cause?: unknown }
  const nested = Array.isArray(errors) ? errors.flatMap(e => errorNames(e, depth + 1)) : []
  return [...(typeof apiId === 'string' ? [apiId] : []), ...nested, ...errorNames(cause, depth + 1)]
}

function oauthOptions (props: ClientProps, label: string): SaslOptions {
  const jaas = jaasEntry(props, 'OAUTHBEARER')
  const handler = props['sasl.login.callback.handler.class']?.trim() ?? ''
  const endpoint = props['sasl.oauthbearer.token.endpoint.url']?.trim() ?? ''
  const secured = SECURED_HANDLERS.includes(handler)
  if (!secured && handler !== '' && handler !== UNSECURED_HANDLER) {
    throw new ClientConfigError('sasl.login.callback.handler.class', `is ${handler}, which kmirror cannot load: use ${SECURED_HANDLERS[0] ?? ''} (with sasl.oauthbearer.token.endpoint.url), or leave it unset for Java's unsecured tokens`)
  }
  const extensions = extensionsOf(jaas.options, secured ? 'extension_' : 'unsecuredLoginExtension_')
  const common = { mechanism: 'OAUTHBEARER' as const, authBytesValidator: tokenRefusal(label), ...(Object.keys(extensions).length > 0 ? { oauthBearerExtensions: extensions } : {}) }
  if (!secured) {
    if (endpoint !== '') {
      throw new ClientConfigError('sasl.login.callback.handler.class', `is not set, so Java would ignore sasl.oauthbearer.token.endpoint.url and make unsecured tokens: set it to ${SECURED_HANDLERS[0] ?? ''}`)
    }
    const make = unsecuredToken(jaas.options)
    const cache = new TokenCache(async () => make(Date.now()), refreshSettings(props))
    return { ...common, token: async () => await cache.token() }
  }
  const credentials = clientCredentials(props, jaas, endpoint)
  const cache = new TokenCache(async () => await fetchClientCredentialsToken(credentials), refreshSettings(props))
  return { ...common, token: async () => await cache.token() }
}

function extensionsOf (options: Readonly<Record<string, string>>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(options).filter(([k]) => k.startsWith(prefix) && k.length > prefix.length).map(([k, v]) => [k.slice(prefix.length), v]))
}

/** The broker answers a refused token with a JSON challenge ({"status":"invalid_token",...}) instead of an error. */
function tokenRefusal (label: string): NonNullable<SaslOptions['authBytesValidator']> {
  return (authBytes, callback) => {
    let status: unknown
    try {
      status = authBytes.length > 0 ? (JSON.parse(authBytes.toString('utf8')) as { status?: unknown }).status : undefined
    } catch {
      status = undefined
    }
    if (typeof status === 'string') {
      callback(new KmirrorError(ErrorCodes.AUTHENTICATION, `${label} refused the OAUTHBEARER token (${status}): check that the broker trusts the token's issuer and signing key, and its audience, scope and expiry`, { retriable: true }), undefined as never)
      return
    }
    callback(null, authBytes)
  }
}

function clientCredentials (props: ClientProps, jaas: JaasEntry, endpoint: string): ClientCredentials {
  if (endpoint === '') throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', `is not set: ${SECURED_HANDLERS[0] ?? ''} needs the token endpoint of the identity provider`)
  let url: URL
  try {
    url = new URL(endpoint)
  } catch (cause) {
    throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', `is not a URL (${JSON.stringify(endpoint)}): write http://, https:// or file: URL`, cause)
  }
  if (!['http:', 'https:', 'file:'].includes(url.protocol)) {
    throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', `is a ${url.protocol} URL: use http://, https:// or file:`)
  }
  const retriever = props['sasl.oauthbearer.jwt.retriever.class']?.trim()
  if (retriever !== undefined && retriever !== '' && !RETRIEVERS.includes(retriever)) {
    throw new ClientConfigError('sasl.oauthbearer.jwt.retriever.class', `is ${retriever}: kmirror supports the client-credentials and file retrievers (${RETRIEVERS.join(', ')})`)
  }
  // Kafka 4.1 keys win over the JAAS options (ClientCredentialsJwtRetriever).
  const pick = (key: string, option: string): string | undefined => props[key] ?? jaas.options[option]
  const clientId = pick('sasl.oauthbearer.client.credentials.client.id', 'clientId')
  const clientSecret = pick('sasl.oauthbearer.client.credentials.client.secret', 'clientSecret')
  if (url.protocol !== 'file:') {
    if (clientId === undefined || clientId.trim() === '') throw new ClientConfigError('sasl.jaas.config', `has no clientId="..." and sasl.oauthbearer.client.credentials.client.id is not set: the client-credentials flow of ${shownUrl(url)} needs the client id`)
    if (clientSecret === undefined || clientSecret.trim() === '') throw new ClientConfigError('sasl.jaas.config', 'has no clientSecret="..." and sasl.oauthbearer.client.credentials.client.secret is not set: the client-credentials flow needs the client secret')
  }
  return {
    endpoint: url,
    clientId: (clientId ?? '').trim(),
    clientSecret: (clientSecret ?? '').trim(),
    scope: pick('sasl.oauthbearer.scope', 'scope'),
    urlencodeHeader: (props['sasl.oauthbearer.header.urlencode'] ?? 'false').trim().toLowerCase() === 'true',
    retryBackoffMs: numberProp(props, 'sasl.login.retry.backoff.ms', 100),
    retryBackoffMaxMs: numberProp(props, 'sasl.login.retry.backoff.max.ms', 10_000),
    connectTimeoutMs: numberProp(props, 'sasl.login.connect.timeout.ms', 10_000),
    readTimeoutMs: numberProp(props, 'sasl.login.read.timeout.ms', 30_000),
    subjectClaim: props['sasl.oauthbearer.sub.claim.name']?.trim() || 'sub'
  }
}

function refreshSettings (props: ClientProps): RefreshSettings {
  return {
    windowFactor: numberProp(props, 'sasl.login.refresh.window.factor', DEFAULT_REFRESH.windowFactor),
    windowJitter: numberProp(props, 'sasl.login.refresh.window.jitter', DEFAULT_REFRESH.windowJitter),
    minPeriodSeconds: numberProp(props, 'sasl.login.refresh.min.period.seconds', DEFAULT_REFRESH.minPeriodSeconds),
    bufferSeconds: numberProp(props, 'sasl.login.refresh.buffer.seconds', DEFAULT_REFRESH.bufferSeconds)
  }
}

function numberProp (props: ClientProps, key: string, fallback: number): number {
  const raw = props[key]?.trim()
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new ClientConfigError(key, `must be a non-negative number, not ${JSON.stringify(raw)}`)
  return value
}
