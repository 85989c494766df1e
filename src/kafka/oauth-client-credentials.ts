/**
 * The client-credentials grant of Java's OAuthBearerLoginCallbackHandler (HttpAccessTokenRetriever,
 * ClientCredentialsJwtRetriever): one POST to `sasl.oauthbearer.token.endpoint.url` with Basic authorization,
 * retried with back-off as Java does, or the token read from a `file:` URL.
 *
 * Each attempt is bounded as a whole, not per byte: `sasl.login.connect.timeout.ms` until the connection (and
 * its TLS handshake) stands, then `sasl.login.read.timeout.ms` until the whole answer is in, which is at most
 * MAX_ANSWER_BYTES. An endpoint that trickles its answer byte by byte cannot hold a cluster's token (and so
 * every connection of that cluster) forever. A timeout of 0 is no deadline, as in Java (HttpURLConnection);
 * the answer's size stays capped.
 *
 * Messages name the endpoint without user info, query or fragment, never a secret, and not the cluster: the
 * caller's action names it ("check the brokers of cluster A: the OAUTHBEARER token endpoint ...").
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import { readFile } from 'node:fs/promises'
import type { Socket } from 'node:net'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { Token } from './oauth-token-cache.ts'
import { nodeTlsOptions, type TlsMaterial } from './tls-stores.ts'

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

/**
 * TLS settings of an https endpoint (the `ssl.*` options of the JAAS line, as Java reads them for it), with
 * `ssl.endpoint.identification.algorithm` read as `verifyHostname`.
 */
export type EndpointTls = TlsMaterial & { readonly verifyHostname: boolean }

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
  /** `sasl.login.connect.timeout.ms` / `sasl.login.read.timeout.ms`; 0 = no deadline. */
  readonly connectTimeoutMs: number
  readonly readTimeoutMs: number
  readonly subjectClaim: string
  /** For https endpoints; undefined = Node's default CAs and host-name check. */
  readonly tls?: EndpointTls
}

/** HTTP statuses Java's HttpAccessTokenRetriever does not retry. */
const UNRETRYABLE = new Set([400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505])

/** A token answer is a few kilobytes; anything far larger is not one (a wrong URL, a misbehaving server). */
export const MAX_ANSWER_BYTES = 1024 * 1024

/** The endpoint as it may be shown: no user info, query or fragment. */
export function shownUrl (url: URL): string {
  return url.protocol === 'file:' ? `file://${url.host}${url.pathname}` : `${url.protocol}//${url.host}${url.pathname}`
}

/** Fetches one token with the client-credentials grant (or from the file), retrying as Java does. */
export async function fetchClientCredentialsToken (settings: ClientCredentials): Promise<Token> {
  const where = `the OAUTHBEARER token endpoint ${shownUrl(settings.endpoint)}`
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

/**
 * Why an attempt got no usable answer: no connection (`unreachable`), no whole answer in time (`no-answer`), or
 * an answer too large to be a token (`too-large`, not retried).
 */
class AttemptFailure extends Error {
  readonly kind: 'unreachable' | 'no-answer' | 'too-large'

  constructor (kind: AttemptFailure['kind'], message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'AttemptFailure'
    this.kind = kind
  }
}

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
      if (!(err instanceof AttemptFailure)) throw err
      failure = authError(`${where} ${describeFailure(err)}`, err)
      if (err.kind === 'too-large') throw failure
    }
    const wait = Math.min(settings.retryBackoffMs * 2 ** (attempt - 1), deadline - Date.now())
    if (wait <= 0) throw failure
    await new Promise(resolve => setTimeout(resolve, wait))
  }
}

function describeFailure (failure: AttemptFailure): string {
  switch (failure.kind) {
    case 'unreachable': return `could not be reached (${failure.message}): check the URL and that the endpoint is reachable from here`
    case 'no-answer': return `${failure.message}: the identity provider is slow or stuck; kmirror retries for up to sasl.login.retry.backoff.max.ms`
    case 'too-large': return `${failure.message}, which is no token answer: check sasl.oauthbearer.token.endpoint.url`
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

/** Java's URLEncoder.encode (form encoding: a blank becomes `+`). */
function formEncode (value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}

/** The request as Java's HttpAccessTokenRetriever sends it. */
function requestOf (settings: ClientCredentials): { options: RequestOptions, body: string } {
  const id = settings.urlencodeHeader ? formEncode(settings.clientId) : settings.clientId
  const secret = settings.urlencodeHeader ? formEncode(settings.clientSecret) : settings.clientSecret
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (settings.scope !== undefined && settings.scope.trim() !== '') form.set('scope', settings.scope.trim())
  const body = form.toString()
  const headers = {
    Accept: 'application/json',
    Authorization: `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`,
    'Cache-Control': 'no-cache',
    'Content-Type': 'application/x-www-form-urlencoded',
    'Content-Length': Buffer.byteLength(body)
  }
  return { options: { method: 'POST', agent: false, headers, ...(settings.tls === undefined ? {} : nodeTlsOptions(settings.tls, settings.tls.verifyHostname)) }, body }
}

/**
 * One attempt: connect within connectTimeoutMs (TCP and TLS), then the whole answer within readTimeoutMs (0: no
 * deadline for that step). Rejects with an AttemptFailure when there is no usable answer.
 */
function post (settings: ClientCredentials): Promise<Reply> {
  const { options, body } = requestOf(settings)
  const https = settings.endpoint.protocol === 'https:'
  return new Promise((resolve, reject) => {
    let connected = false
    let timer: NodeJS.Timeout | undefined
    let settled = false
    const settle = (outcome: Reply | AttemptFailure): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (outcome instanceof AttemptFailure) {
        reject(outcome)
        req.destroy()
      } else {
        resolve(outcome)
      }
    }
    const failAfter = (ms: number, failure: () => AttemptFailure): void => {
      clearTimeout(timer)
      timer = ms === 0 ? undefined : setTimeout(() => settle(failure()), ms)
    }
    const req: ClientRequest = (https ? httpsRequest : httpRequest)(settings.endpoint, options, res => readAnswer(res, settle))
    failAfter(settings.connectTimeoutMs, () => new AttemptFailure('unreachable', `no connection within sasl.login.connect.timeout.ms = ${settings.connectTimeoutMs} ms`))
    req.on('socket', (socket: Socket) => socket.once(https ? 'secureConnect' : 'connect', () => {
      connected = true
      failAfter(settings.readTimeoutMs, () => new AttemptFailure('no-answer', `did not answer within sasl.login.read.timeout.ms = ${settings.readTimeoutMs} ms of connecting`))
    }))
    req.on('error', err => settle(new AttemptFailure(connected ? 'no-answer' : 'unreachable', connected ? `closed the connection without a whole answer (${err.message})` : err.message, err)))
    req.end(body)
  })
}

/** Collects the answer; more than MAX_ANSWER_BYTES is a failure. */
function readAnswer (res: IncomingMessage, settle: (outcome: Reply | AttemptFailure) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  res.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (size > MAX_ANSWER_BYTES) settle(new AttemptFailure('too-large', `answered with more than ${MAX_ANSWER_BYTES} bytes`))
    else chunks.push(chunk)
  })
  res.on('end', () => settle({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
  res.on('error', err => settle(new AttemptFailure('no-answer', `closed the connection without a whole answer (${err.message})`, err)))
}
