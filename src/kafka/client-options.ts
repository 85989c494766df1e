/**
 * Java-client style properties (`bootstrap.servers`, `security.protocol`, `sasl.*`, `ssl.*`, ...) to the
 * connection options of the Kafka library. The config module has already validated the values (read here through
 * client-settings.ts), and the stores and SASL settings are loaded by client-security.ts; this file only translates.
 */
import type { ConnectionOptions } from '@platformatic/kafka'
import { clientInt } from '../config/client-settings.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { clientSecurity } from './client-security.ts'
import { nodeTlsOptions, verifiesHostname } from './tls-stores.ts'

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
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `client ${clientId} has no bootstrap.servers: set bootstrap.servers of its cluster in the configuration`)
  }
  const options: ConnectOptions = {
    clientId,
    bootstrapBrokers: bootstrap,
    connectTimeout: clientInt(props, 'socket.connection.setup.timeout.ms'),
    requestTimeout: clientInt(props, 'request.timeout.ms'),
    timeout: clientInt(props, 'request.timeout.ms'),
    retries: 5,
    retryDelay: clientInt(props, 'retry.backoff.ms')
  }
  const security = clientSecurity(props)
  if (security.sasl !== undefined) options.sasl = security.sasl
  if (security.tls !== undefined) options.tls = nodeTlsOptions(security.tls, verifiesHostname(props))
  return options
}
