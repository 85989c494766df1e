/**
 * SASL/OAUTHBEARER as MM2 users configure it for the Java client: with
 * `sasl.login.callback.handler.class = ...OAuthBearerLoginCallbackHandler`, tokens from the client-credentials
 * flow at `sasl.oauthbearer.token.endpoint.url` (credentials from the Kafka 4.1 keys, else the JAAS options; the
 * endpoint's TLS from the JAAS `ssl.*` options, as Java's JaasOptionsUtils reads them); without a handler (or with
 * Java's unsecured one), Java's unsecured tokens. One token cache per setting serves every connection.
 */
import { clientDouble, clientInt } from '../config/client-settings.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClientConfigError } from './client-config-error.ts'
import type { JaasEntry } from '../config/jaas.ts'
import { fetchClientCredentialsToken, shownUrl, type ClientCredentials, type EndpointTls } from './oauth-client-credentials.ts'
import { TokenCache, type RefreshSettings } from './oauth-token-cache.ts'
import { unsecuredToken } from './oauth-unsecured.ts'
import type { SaslOptions } from './sasl-options.ts'
import { loadTlsMaterial, verifiesHostname } from './tls-stores.ts'

const OAUTH_PACKAGE = 'org.apache.kafka.common.security.oauthbearer.'
/** The handler that fetches tokens from sasl.oauthbearer.token.endpoint.url, under its 3.4+ and 3.1-3.3 names. */
const SECURED_HANDLERS = [`${OAUTH_PACKAGE}OAuthBearerLoginCallbackHandler`, `${OAUTH_PACKAGE}secured.OAuthBearerLoginCallbackHandler`]
const SECURED_HANDLER = `${OAUTH_PACKAGE}OAuthBearerLoginCallbackHandler`
const UNSECURED_HANDLER = `${OAUTH_PACKAGE}internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler`
const RETRIEVERS = [`${OAUTH_PACKAGE}DefaultJwtRetriever`, `${OAUTH_PACKAGE}ClientCredentialsJwtRetriever`, `${OAUTH_PACKAGE}FileJwtRetriever`]

/** The library's OAUTHBEARER options for `props`, whose `sasl.jaas.config` is `jaas`. Throws ClientConfigError. */
export function oauthOptions (props: ClientProps, jaas: JaasEntry): SaslOptions {
  const handler = props['sasl.login.callback.handler.class']?.trim() ?? ''
  const endpoint = props['sasl.oauthbearer.token.endpoint.url']?.trim() ?? ''
  const secured = SECURED_HANDLERS.includes(handler)
  if (!secured && handler !== '' && handler !== UNSECURED_HANDLER) {
    throw new ClientConfigError('sasl.login.callback.handler.class', `is ${handler}, which kmirror cannot load: use ${SECURED_HANDLER} (with sasl.oauthbearer.token.endpoint.url), or leave it unset for Java's unsecured tokens`)
  }
  const extensions = extensionsOf(jaas.options, secured ? 'extension_' : 'unsecuredLoginExtension_')
  const common = { mechanism: 'OAUTHBEARER' as const, authBytesValidator: tokenRefusal, ...(Object.keys(extensions).length > 0 ? { oauthBearerExtensions: extensions } : {}) }
  if (!secured) {
    if (endpoint !== '') {
      const which = handler === '' ? 'is not set, so Java would use its unsecured handler, which' : `is Java's unsecured handler, which`
      throw new ClientConfigError('sasl.login.callback.handler.class', `${which} ignores sasl.oauthbearer.token.endpoint.url and makes unsecured tokens: set it to ${SECURED_HANDLER} to fetch tokens from the endpoint, or remove the URL`)
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

type AuthBytesValidator = NonNullable<SaslOptions['authBytesValidator']>

/** The broker answers a refused token with a JSON challenge ({"status":"invalid_token",...}) instead of an error. */
const tokenRefusal: AuthBytesValidator = (authBytes, callback) => {
  let status: unknown
  try {
    status = authBytes.length > 0 ? (JSON.parse(authBytes.toString('utf8')) as { status?: unknown }).status : undefined
  } catch {
    status = undefined
  }
  if (typeof status === 'string') {
    callback(new KmirrorError(ErrorCodes.AUTHENTICATION, `the broker refused the OAUTHBEARER token (${status}): check that the broker trusts the token's issuer and signing key, and its audience, scope and expiry`, { retriable: true }))
    return
  }
  callback(null, authBytes)
}

function clientCredentials (props: ClientProps, jaas: JaasEntry, endpoint: string): ClientCredentials {
  const url = endpointUrl(endpoint)
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
  const tls = url.protocol === 'https:' ? endpointTls(jaas.options) : undefined
  return {
    endpoint: url,
    clientId: (clientId ?? '').trim(),
    clientSecret: (clientSecret ?? '').trim(),
    scope: pick('sasl.oauthbearer.scope', 'scope'),
    urlencodeHeader: (props['sasl.oauthbearer.header.urlencode'] ?? 'false').trim().toLowerCase() === 'true',
    retryBackoffMs: clientInt(props, 'sasl.login.retry.backoff.ms'),
    retryBackoffMaxMs: clientInt(props, 'sasl.login.retry.backoff.max.ms'),
    connectTimeoutMs: clientInt(props, 'sasl.login.connect.timeout.ms'),
    readTimeoutMs: clientInt(props, 'sasl.login.read.timeout.ms'),
    subjectClaim: props['sasl.oauthbearer.sub.claim.name']?.trim() || 'sub',
    ...(tls === undefined ? {} : { tls })
  }
}

/** The endpoint as a URL; the value itself is never shown (it may hold credentials in its user info or query). */
function endpointUrl (endpoint: string): URL {
  if (endpoint === '') throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', `is not set: ${SECURED_HANDLER} needs the token endpoint of the identity provider`)
  let url: URL
  try {
    url = new URL(endpoint)
  } catch (cause) {
    throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', 'is not a URL: write an http://, https:// or file: URL', cause)
  }
  if (!['http:', 'https:', 'file:'].includes(url.protocol)) {
    throw new ClientConfigError('sasl.oauthbearer.token.endpoint.url', `is a ${url.protocol} URL: use http://, https:// or file:`)
  }
  return url
}

/**
 * The TLS settings of an https token endpoint: Java reads the `ssl.*` options of the JAAS line for it
 * (`OAuthBearerLoginModule required ... ssl.truststore.location="..." ssl.truststore.password="...";`), with the
 * client's store rules; without them, the system's CAs. A problem names the option inside sasl.jaas.config.
 */
function endpointTls (options: Readonly<Record<string, string>>): EndpointTls | undefined {
  const ssl = Object.fromEntries(Object.entries(options).filter(([key]) => key.startsWith('ssl.')))
  if (Object.keys(ssl).length === 0) return undefined
  try {
    return { ...loadTlsMaterial(ssl), verifyHostname: verifiesHostname(ssl) }
  } catch (err) {
    if (!(err instanceof ClientConfigError)) throw err
    throw new ClientConfigError('sasl.jaas.config', `has a TLS option for the token endpoint that kmirror cannot use: ${err.message}`, err)
  }
}

function refreshSettings (props: ClientProps): RefreshSettings {
  return {
    windowFactor: clientDouble(props, 'sasl.login.refresh.window.factor'),
    windowJitter: clientDouble(props, 'sasl.login.refresh.window.jitter'),
    minPeriodSeconds: clientInt(props, 'sasl.login.refresh.min.period.seconds'),
    bufferSeconds: clientInt(props, 'sasl.login.refresh.buffer.seconds')
  }
}
