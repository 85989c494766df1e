/**
 * The client-credentials grant of Java's OAuthBearerLoginCallbackHandler (HttpAccessTokenRetriever,
 * ClientCredentialsJwtRetriever): one POST to `sasl.oauthbearer.token.endpoint.url` with Basic authorization,
 * retried with back-off as Java does, or the token read from a `file:` URL.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { readFile } from 'node:fs/promises'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { Token } from './oauth-token-cache.ts'

/** What a JWT says about itself; undefined when `value` is not a JWT with a numeric `exp` and the subject claim. */
export function readJwt (value: string, subjectClaim: string): Token | undefined {
  const parts = value.split('.')
  if (parts.length !== 3) return undefined
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof claims !== 'object' || claims === null) return undefined
  const { exp, iat } = claims as { exp?: unknown, iat?: unknown }
  const subject = (claims as Record<string, unknown>)[subjectClaim]
  if (typeof exp !== 'number' || typeof subject !== 'string' || subject.trim() === '') return undefined
  return { value, expiresAt: Math.round(exp * 1000), ...(typeof iat === 'number' ? { issuedAt: Math.round(iat * 1000) } : {}) }
}

export interface ClientCredentials {
  /** `sasl.oauthbearer.token.endpoint.url`: http, https, or file (a file holding the token, read each time). */
  readonly endpoint: URL
  readonly clientId: string
  readonly clientSecret: string
  readonly scope: string | undefined
  /** `sasl.oauthbearer.header.urlencode`. */
  readonly urlencodeHeader: boolean
  /** `sasl.login.retry.backoff.ms` / `.max.ms`: exponential back-off, bounded by the max in total. */
  readonly retryBackoffMs: number
  readonly retryBackoffMaxMs: number
  readonly connectTimeoutMs: number
  readonly readTimeoutMs: number
  readonly subjectClaim: string
}

/** HTTP statuses Java's HttpAccessTokenRetriever does not retry. */
const UNRETRYABLE = new Set([400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505])

/** The endpoint as it may be shown: no user info, query or fragment. */
export function shownUrl (url: URL): string {
  return url.protocol === 'file:' ? url.href : `${url.protocol}//${url.host}${url.pathname}`
}

/** Fetches one token with the client-credentials grant, retrying as Java does. `label` names the cluster. */
export async function fetchClientCredentialsToken (settings: ClientCredentials, label: string): Promise<Token> {
  const where = `${label}: the OAUTHBEARER token endpoint ${shownUrl(settings.endpoint)}`
  const body = settings.endpoint.protocol === 'file:'
    ? (await readFile(settings.endpoint).catch((cause: unknown) => { throw authError(`${where} cannot be read (${(cause as Error).message})`, cause) })).toString('utf8').trim()
    : accessToken(await postWithRetries(settings, where), where)
  const token = readJwt(body, settings.subjectClaim)
  if (token === undefined) {
    throw authError(`${where} returned an access token that is not a JWT with an "exp" and a "${settings.subjectClaim}" claim, which the Kafka client requires (sasl.oauthbearer.sub.claim.name names the subject claim)`)
  }
  return token
}

function authError (message: string, cause?: unknown): KmirrorError {
  return new KmirrorError(ErrorCodes.AUTHENTICATION, message, { retriable: true, ...(cause === undefined ? {} : { cause }) })
}

interface Reply { readonly status: number, readonly body: string }

async function postWithRetries (settings: ClientCredentials, where: string): Promise<string> {
  const deadline = Date.now() + settings.retryBackoffMaxMs
  for (let attempt = 1; ; attempt++) {
    let failure: KmirrorError
    try {
      const reply = await post(settings)
      if (reply.status === 200 || reply.status === 201) return reply.body
      failure = authError(`${where} answered HTTP ${reply.status}${oauthErrorText(reply.body)}: ${statusHint(reply.status)}`)
      if (UNRETRYABLE.has(reply.status)) throw failure
    } catch (err) {
      if (err instanceof KmirrorError) throw err
      failure = authError(`${where} could not be reached (${(err as Error).message}): check the URL and that the endpoint is reachable from here`, err)
    }
    const wait = Math.min(settings.retryBackoffMs * 2 ** (attempt - 1), deadline - Date.now())
    if (wait <= 0) throw failure
    await new Promise(resolve => setTimeout(resolve, wait))
  }
}

function statusHint (status: number): string {
  if (status === 401 || status === 403 || status === 400) {
    return 'check the client id and secret (sasl.oauthbearer.client.credentials.client.id/secret, or clientId/clientSecret in sasl.jaas.config) and sasl.oauthbearer.scope'
  }
  if (status === 404 || status === 405) return 'check sasl.oauthbearer.token.endpoint.url'
  return 'the identity provider failed; kmirror retries with back-off (sasl.login.retry.backoff.ms, sasl.login.retry.backoff.max.ms)'
}

/** RFC 6749 §5.2 error fields, which carry no secret (Java logs them too). */
function oauthErrorText (body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown, error_description?: unknown }
    if (typeof parsed.error !== 'string') return ''
    return ` (${parsed.error}${typeof parsed.error_description === 'string' ? `: ${parsed.error_description.slice(0, 200)}` : ''})`
  } catch {
    return ''
  }
}

function accessToken (body: string, where: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    throw authError(`${where} answered with a body that is not JSON`)
  }
  const token = (parsed as { access_token?: unknown } | null)?.access_token
  if (typeof token !== 'string' || token.trim() === '') throw authError(`${where} answered without an access_token`)
  return token.trim()
}

function formEncode (value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}

function post (settings: ClientCredentials): Promise<Reply> {
  const id = settings.urlencodeHeader ? formEncode(settings.clientId) : settings.clientId
  const secret = settings.urlencodeHeader ? formEncode(settings.clientSecret) : settings.clientSecret
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (settings.scope !== undefined && settings.scope.trim() !== '') form.set('scope', settings.scope.trim())
  const body = form.toString()
  const send = settings.endpoint.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(settings.endpoint, {
      method: 'POST',
      agent: false,
      headers: {
        Accept: 'application/json',
        Authorization: `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`,
        'Cache-Control': 'no-cache',
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': Buffer.byteLength(body)
      },
      timeout: settings.readTimeoutMs
    }, (res: IncomingMessage) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => { clearTimeout(connectTimer); resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }) })
      res.on('error', reject)
    })
    const connectTimer = setTimeout(() => req.destroy(new Error(`no connection within ${settings.connectTimeoutMs} ms`)), settings.connectTimeoutMs)
    req.on('socket', socket => socket.once('connect', () => clearTimeout(connectTimer)))
    req.on('timeout', () => req.destroy(new Error(`no answer within ${settings.readTimeoutMs} ms`)))
    req.on('error', err => { clearTimeout(connectTimer); reject(err) })
    req.end(body)
  })
}
