/**
 * `host:port` as written in bootstrap.servers (the host may be an IPv6 address in brackets) as the client
 * library's broker address.
 */
import type { Broker } from '@platformatic/kafka'

export function parseBrokerAddress (address: string): Broker {
  const colon = address.lastIndexOf(':')
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(colon + 1)) }
}
