/**
 * Java-client style properties (`bootstrap.servers`, `security.protocol`, `sasl.jaas.config`, ...) to the
 * connection options of the Kafka library. The config module has already validated the values; this file
 * only translates, and names the key in any error so the user knows what to fix.
 */
import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'

export interface ConnectOptions extends ConnectionOptions {
  clientId: string
  bootstrapBrokers: string[]
  timeout: number
  retries: number
  retryDelay: number
}

const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const
type SaslMechanism = (typeof SASL_MECHANISMS)[number]

export function toConnectOptions (props: ClientProps, clientId: string): ConnectOptions {
  const bootstrap = (props['bootstrap.servers'] ?? '').split(',').map(s => s.trim()).filter(s => s.length > 0)
  if (bootstrap.length === 0) {
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `client ${clientId} has no bootstrap.servers: set <alias>.bootstrap.servers in the configuration`)
  }
  const options: ConnectOptions = {
    clientId,
    bootstrapBrokers: bootstrap,
    connectTimeout: intProp(props, 'socket.connection.setup.timeout.ms', 10_000),
    requestTimeout: intProp(props, 'request.timeout.ms', 30_000),
    timeout: intProp(props, 'request.timeout.ms', 30_000),
    retries: 5,
    retryDelay: intProp(props, 'retry.backoff.ms', 100)
  }
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').toUpperCase()
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') options.sasl = saslOptions(props)
  if (protocol === 'SSL' || protocol === 'SASL_SSL') options.tls = tlsOptions(props)
  return options
}

function intProp (props: ClientProps, key: string, fallback: number): number {
  const raw = props[key]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback
}

function saslOptions (props: ClientProps): NonNullable<ConnectionOptions['sasl']> {
  const mechanism = (props['sasl.mechanism'] ?? 'GSSAPI').toUpperCase()
  if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `sasl.mechanism=${mechanism} is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`)
  }
  const jaas = props['sasl.jaas.config'] ?? ''
  const username = jaasOption(jaas, 'username')
  const password = jaasOption(jaas, 'password')
  if (username === undefined || password === undefined) {
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, 'sasl.jaas.config must name username="..." and password="..." for SASL/' + mechanism)
  }
  return { mechanism: mechanism as SaslMechanism, username, password }
}

/** Reads `name="value"` (or unquoted `name=value`) out of a JAAS login-module line. */
export function jaasOption (jaas: string, name: string): string | undefined {
  const quoted = new RegExp(`(?:^|\\s)${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(jaas)
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, '$1')
  const bare = new RegExp(`(?:^|\\s)${name}\\s*=\\s*([^\\s;"]+)`).exec(jaas)
  return bare?.[1]
}

function tlsOptions (props: ClientProps): NonNullable<ConnectionOptions['tls']> {
  const tls: NonNullable<ConnectionOptions['tls']> = {}
  const ca = props['ssl.truststore.certificates'] ?? readPem(props, 'ssl.truststore.location')
  if (ca !== undefined) tls.ca = ca
  // Java's PEM keystore (ssl.keystore.type=PEM) is one file holding the private key and the certificate chain;
  // Node's TLS picks the parts it needs out of the same PEM text.
  const inlineCert = props['ssl.keystore.certificate.chain']
  const inlineKey = props['ssl.keystore.key']
  // Inline PEM values and a keystore file are alternatives, as in Java: inline values win and the file is not read.
  const keystore = inlineCert === undefined && inlineKey === undefined ? readPem(props, 'ssl.keystore.location') : undefined
  const cert = inlineCert ?? keystore
  const key = inlineKey ?? keystore
  if (cert !== undefined) tls.cert = cert
  if (key !== undefined) tls.key = key
  const passphrase = props['ssl.key.password']
  if (passphrase !== undefined && passphrase !== '') tls.passphrase = passphrase
  if (props['ssl.endpoint.identification.algorithm'] === '') tls.checkServerIdentity = () => undefined
  return tls
}

function readPem (props: ClientProps, key: string): string | undefined {
  const path = props[key]
  if (path === undefined || path === '') return undefined
  try {
    return readFileSync(path, 'utf8')
  } catch (cause) {
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `${key}=${path} cannot be read: point it at a readable PEM file`, { cause })
  }
}
