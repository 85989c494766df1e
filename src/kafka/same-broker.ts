/**
 * Whether a bootstrap server and a broker of the metadata are one broker under two names (`localhost:9092` in
 * bootstrap.servers, `127.0.0.1:9092` advertised; a DNS alias and the broker's own host name). The start-up check
 * reports a broker that did not answer once: under its advertised address, which is the one its other messages use.
 *
 * Invariants:
 * - Names are compared first as written (case, IPv6 brackets), then by the addresses they resolve to, and the
 *   ports must match: two brokers on one host are never taken for one.
 * - Resolving is bounded by the caller's deadline; a name that does not resolve by then, or at all, matches only
 *   as written, so the worst case is the old double report, never a broker left out.
 */
import { lookup } from 'node:dns/promises'
import { parseBrokerAddress } from './broker-address.ts'

/** The IP addresses HOST resolves to; none when it does not resolve. */
export type Resolve = (host: string) => Promise<readonly string[]>

export const resolveHost: Resolve = async host => {
  try {
    return (await lookup(host, { all: true })).map(a => a.address)
  } catch {
    return []
  }
}

/** `host:port` as a broker or bootstrap server is compared: `[::1]:9092` and `::1:9092`, `Broker-1` and `broker-1` alike. */
export function addressKey (address: string): string {
  const { host, port } = parseBrokerAddress(address)
  return `${host.toLowerCase()}:${port}`
}

/**
 * The SERVERS (bootstrap addresses) that are none of BROKERS (advertised `host:port`), by name or by resolved
 * address, as far as resolving finishes within TIMEOUT_MS.
 */
export async function notAmong (servers: readonly string[], brokers: readonly string[], timeoutMs: number, resolve: Resolve = resolveHost): Promise<string[]> {
  const named = new Set(brokers.map(addressKey))
  const unnamed = servers.filter(s => !named.has(addressKey(s)))
  if (unnamed.length === 0) return []
  const resolved = await withDeadline(resolvedKeys([...unnamed, ...brokers], resolve), timeoutMs)
  if (resolved === null) return unnamed
  const brokerKeys = new Set(brokers.flatMap(b => resolved.get(b) ?? []))
  return unnamed.filter(s => !(resolved.get(s) ?? []).some(k => brokerKeys.has(k)))
}

/** Each address with the `ip:port` keys its host resolves to. */
async function resolvedKeys (addresses: readonly string[], resolve: Resolve): Promise<Map<string, string[]>> {
  const entries = await Promise.all(addresses.map(async address => {
    const { host, port } = parseBrokerAddress(address)
    const ips = await resolve(host)
    return [address, ips.map(ip => `${ip.toLowerCase()}:${port}`)] as const
  }))
  return new Map(entries)
}

async function withDeadline<T> (promise: Promise<T>, timeoutMs: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<null>(resolve => { timer = setTimeout(() => resolve(null), Math.max(0, timeoutMs)) })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}
