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

/** The least a command's cap leaves a request (unless its own timeout or `--timeout` is less). */
export const COMMAND_REQUEST_FLOOR_MS = 10_000

/** A command's `--timeout`, and whether it bounds each request (verify) or the whole command (the others). */
let commandCap: { deadlineMs: number, perRequest: boolean } | undefined

/**
 * Caps `request.timeout.ms` and `socket.connection.setup.timeout.ms` of every client opened from now on (set
 * once by a command with `--timeout`, before it opens any client), so that a broker that never answers fails the
 * command within its deadline with an error naming the cluster, the broker and the request.
 *
 * When `--timeout` bounds the whole command, the cap is a third of it, not less than COMMAND_REQUEST_FLOOR_MS: a
 * broker that accepts connections and never answers (wedged, frozen) costs one attempt, and the retry (to the
 * broker the cluster moved its work to, within broker.session.timeout.ms, 9 s by default) can still fit. The
 * floor keeps short deadlines from cutting off requests a slow but working broker answers (a large read of an
 * internal topic, a source under load). `verify`'s `--timeout` bounds each request: the cap is all of it.
 */
export function capClientTimeouts (ms: number, bounds: 'command' | 'request' = 'command'): void {
  commandCap = { deadlineMs: ms, perRequest: bounds === 'request' }
}

/** A client timeout of MS under a command deadline of DEADLINE_MS (none: `run`), as capClientTimeouts says. */
export function cappedTimeout (ms: number, deadlineMs: number | undefined, perRequest = false): number {
  if (deadlineMs === undefined) return ms
  if (perRequest) return Math.min(ms, deadlineMs)
  return Math.min(ms, deadlineMs, Math.max(Math.round(deadlineMs / 3), COMMAND_REQUEST_FLOOR_MS))
}

function capped (ms: number): number {
  return cappedTimeout(ms, commandCap?.deadlineMs, commandCap?.perRequest)
}

export function toConnectOptions (props: ClientProps, clientId: string): ConnectOptions {
  const bootstrap = (props['bootstrap.servers'] ?? '').split(',').map(s => s.trim()).filter(s => s.length > 0)
  if (bootstrap.length === 0) {
    throw new KmirrorError(ErrorCodes.CONFIG_INVALID, `client ${clientId} has no bootstrap.servers: set bootstrap.servers of its cluster in the configuration`)
  }
  const options: ConnectOptions = {
    clientId,
    bootstrapBrokers: bootstrap,
    connectTimeout: capped(clientInt(props, 'socket.connection.setup.timeout.ms')),
    requestTimeout: capped(clientInt(props, 'request.timeout.ms')),
    timeout: capped(clientInt(props, 'request.timeout.ms')),
    retries: 5,
    retryDelay: clientInt(props, 'retry.backoff.ms')
  }
  const security = clientSecurity(props)
  if (security.sasl !== undefined) options.sasl = security.sasl
  if (security.tls !== undefined) options.tls = nodeTlsOptions(security.tls, verifiesHostname(props))
  return options
}
