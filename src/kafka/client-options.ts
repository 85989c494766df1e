/**
 * Java-client style properties (`bootstrap.servers`, `security.protocol`, `sasl.*`, `ssl.*`, ...) to the
 * connection options of the Kafka library. The config module has already validated the values, and the stores
 * and SASL settings are loaded by client-security.ts; this file only translates.
 */
import type { ConnectionOptions } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { clientSecurity } from './client-security.ts'
import type { TlsMaterial } from './tls-stores.ts'

export { jaasOption } from './jaas.ts'

export interface ConnectOptions extends ConnectionOptions {
  clientId: string
  bootstrapBrokers: string[]
  timeout: number
  retries: number
  retryDelay: number
}

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
  const security = clientSecurity(props)
  if (security.sasl !== undefined) options.sasl = security.sasl
  if (security.tls !== undefined) options.tls = tlsOptions(security.tls, props)
  return options
}

function intProp (props: ClientProps, key: string, fallback: number): number {
  const raw = props[key]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback
}

function tlsOptions (material: TlsMaterial, props: ClientProps): NonNullable<ConnectionOptions['tls']> {
  const tls: NonNullable<ConnectionOptions['tls']> = {}
  if (material.ca !== undefined) tls.ca = [...material.ca]
  if (material.cert !== undefined) tls.cert = material.cert
  if (material.key !== undefined) tls.key = material.key
  if (material.pfx !== undefined) tls.pfx = material.pfx
  if (material.passphrase !== undefined) tls.passphrase = material.passphrase
  // ssl.endpoint.identification.algorithm: https (the default) checks the broker's host name, empty turns it off.
  if ((props['ssl.endpoint.identification.algorithm'] ?? 'https').trim() === '') tls.checkServerIdentity = () => undefined
  return tls
}
