/**
 * What to tell the operator when kmirror cannot connect to a cluster, chosen from the cause the error tree holds
 * (Node's TLS verification codes, OpenSSL alerts, socket errno codes, the library's TLS checks): the cause named,
 * and the key to fix. `alias` (when known) prefixes the keys: `A.ssl.truststore.location`.
 */
import { searchErrorTree } from './error-tree.ts'

export interface ConnectionContext {
  /** The cluster alias, for the keys in hints. */
  readonly alias?: string
  /** The client's `security.protocol`, when known: hints about client certificates only apply to TLS. */
  readonly protocol?: string
  /** The client's `bootstrap.servers`, for messages about brokers that did not answer. */
  readonly brokers?: string
}

/**
 * How a client names its cluster: `label` in messages (`cluster A`), `alias` before the keys its hints name
 * (`A.ssl.truststore.location`), and the client's `security.protocol`. ClusterClients gives every client one.
 */
export interface ClusterContext extends ConnectionContext {
  readonly label: string
}

/** The context of a client of cluster ALIAS with PROPS: `cluster <alias>`, and the protocol PROPS set (PLAINTEXT by default). */
export function clusterContext (alias: string, props: Readonly<Record<string, string>>): ClusterContext {
  const brokers = props['bootstrap.servers']?.split(',').map(s => s.trim()).filter(s => s.length > 0).join(',')
  return { label: `cluster ${alias}`, alias, protocol: props['security.protocol']?.trim() || 'PLAINTEXT', ...(brokers ? { brokers } : {}) }
}

interface Cause {
  readonly code: string
  readonly message: string
}

/** Node's certificate verification codes meaning "signed by no CA kmirror trusts". */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'INVALID_CA'
])
const OUTDATED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID'])
/**
 * The TLS alert a broker sent, from Node's code for it: `ERR_SSL_<family>_ALERT_<name>`, the family depending on
 * the alert and the OpenSSL release (`SSLV3_ALERT_BAD_CERTIFICATE`, `SSL/TLS_ALERT_HANDSHAKE_FAILURE` in OpenSSL 3.5).
 */
const ALERT = /^ERR_SSL_(?:SSLV3|SSL\/TLS|TLSV1|TLSV13)_ALERT_([A-Z_]+)$/
/** Alerts the broker sends when it wants a client certificate or refuses the one it got. */
const CLIENT_CERTIFICATE_ALERTS = new Set(['CERTIFICATE_REQUIRED', 'BAD_CERTIFICATE', 'UNKNOWN_CA', 'CERTIFICATE_UNKNOWN', 'CERTIFICATE_EXPIRED', 'CERTIFICATE_REVOKED'])
/** Alerts of a handshake the two sides could not agree on: no common TLS version (or cipher suite, below). */
const PROTOCOL_ALERTS = new Set(['PROTOCOL_VERSION', 'INSUFFICIENT_SECURITY'])
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG'])
const NO_ROUTE = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN'])
const NO_NAME = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME'])

/** The hint for a connection failure, from the most telling cause in `err`'s tree; undefined for other errors. */
export function connectionHint (err: unknown, context: ConnectionContext = {}): string | undefined {
  const key = (name: string): string => `${context.alias === undefined ? '' : `${context.alias}.`}${name}`
  const cause = telling(err)
  if (cause !== undefined) {
    const named = `${cause.code}: ${cause.message}`
    if (UNTRUSTED.has(cause.code)) return `the broker's TLS certificate is not trusted (${named}): set ${key('ssl.truststore.location')} (or ${key('ssl.truststore.certificates')}) to the CA that issued the brokers' certificates`
    if (cause.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return `the broker's TLS certificate does not name the host kmirror connected to (${named}): write in ${key('bootstrap.servers')} a host name the certificate holds (and advertise such names on the brokers), or turn host-name verification off with ${key('ssl.endpoint.identification.algorithm')} = (empty)`
    }
    if (OUTDATED.has(cause.code)) return `the broker's TLS certificate is outside its validity period (${named}): renew the brokers' certificates, and check this machine's clock`
    const alert = ALERT.exec(cause.code)?.[1]
    const clientCertificate = `set ${key('ssl.keystore.location')} (or ${key('ssl.keystore.key')}) to a key and certificate the brokers' truststore trusts`
    const protocols = 'kmirror speaks TLS 1.2 and 1.3 with OpenSSL\'s default cipher suites: check the brokers\' ssl.enabled.protocols and ssl.cipher.suites'
    if (alert !== undefined && CLIENT_CERTIFICATE_ALERTS.has(alert)) return `the broker wants a client certificate or refused kmirror's (${named}): ${clientCertificate}`
    // A handshake failure is the broker's answer to both: a missing or refused client certificate (TLS 1.2), and no
    // cipher suite in common.
    if (alert === 'HANDSHAKE_FAILURE') return `the broker ended the TLS handshake (${named}): it wants a client certificate or refused kmirror's (${clientCertificate}), or it shares no cipher suite or TLS version with kmirror (${protocols})`
    if (alert !== undefined && PROTOCOL_ALERTS.has(alert)) return `the broker and kmirror share no TLS version or cipher suite (${named}): ${protocols}`
    if (NOT_TLS.has(cause.code) || cause.code === 'NOT_TLS') return `the listener does not speak TLS (${cause.message}): check ${key('security.protocol')} (SSL and SASL_SSL are for TLS listeners) and ${key('bootstrap.servers')}`
    if (cause.code === 'TLS_REQUIRED') return `the listener speaks TLS: set ${key('security.protocol')} to SSL or SASL_SSL, and a truststore with ${key('ssl.truststore.location')}`
    if (cause.code === 'ECONNREFUSED') return `nothing accepts connections there (${named}): check ${key('bootstrap.servers')} and that the brokers run`
    if (NO_NAME.has(cause.code)) return `the host name does not resolve (${named}): check ${key('bootstrap.servers')}`
    if (NO_ROUTE.has(cause.code)) return `no connection (${named}): check ${key('bootstrap.servers')} and that the cluster is reachable from here (network, firewall)`
  }
  const tls = context.protocol !== undefined && /SSL/i.test(context.protocol)
  return `check ${key('bootstrap.servers')}, that the cluster is reachable from here, and that ${key('security.protocol')} matches the listener` +
    (tls ? ` (a listener with ssl.client.auth=required closes TLS connections without a client certificate: set ${key('ssl.keystore.location')})` : '')
}

/**
 * Whether a failed connection's cause is a setting to fix, not a moment to wait out: TLS verification, a TLS or
 * plaintext mismatch, a TLS alert, a host name that does not exist. (ECONNREFUSED, resets and timeouts are not.)
 */
export function isConfigurationCause (err: unknown): boolean {
  const cause = telling(err)
  if (cause === undefined) return false
  return UNTRUSTED.has(cause.code) || OUTDATED.has(cause.code) || NOT_TLS.has(cause.code) || ALERT.test(cause.code) ||
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'NOT_TLS', 'TLS_REQUIRED', 'ENOTFOUND', 'EAI_NONAME'].includes(cause.code)
}

/**
 * Whether a failed connection says the broker cannot be reached at all right now (refused, no route, timed out):
 * nothing was sent to it, and a broker that died is fenced by its controller within seconds.
 */
export function isUnreachable (err: unknown): boolean {
  const cause = telling(err)
  return cause !== undefined && (cause.code === 'ECONNREFUSED' || NO_ROUTE.has(cause.code))
}

/** Whether a failed connection names no cause at all (no errno, no TLS code): the peer just closed it. */
export function isBareClose (err: unknown): boolean {
  return telling(err) === undefined
}

/** The first cause in the tree that names what went wrong: an error code kmirror knows, or a TLS check of the library. */
function telling (err: unknown): Cause | undefined {
  return searchErrorTree(err, e => {
    const { code, message } = e as { code?: unknown, message?: unknown }
    const text = typeof message === 'string' ? message : ''
    if (typeof code !== 'string') return undefined
    // Node suggests --use-system-ca for unknown CAs: advice for Node users, not for kmirror's operators.
    if (UNTRUSTED.has(code)) return { code, message: text.replace(/; if the root CA is installed locally.*$/, '') }
    // The library's own checks carry its generic user-error code: tell them by their text.
    if (code === 'PLT_KFK_USER' && /verify the broker supports TLS/i.test(text)) return { code: 'NOT_TLS', message: text }
    if (code === 'PLT_KFK_USER' && /requires TLS/i.test(text)) return { code: 'TLS_REQUIRED', message: text }
    // kmirror's own codes (a KmirrorError wrapping the cause) name no cause.
    if (code.startsWith('PLT_KFK_') || code.startsWith('KMIRROR_ERR_')) return undefined
    return { code, message: text }
  })
}
