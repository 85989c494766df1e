/**
 * Broker addresses compared, and brokers ordered by them.
 * - Whether a bootstrap server and a broker of the metadata are one broker under two names (`localhost:9092` in
 *   bootstrap.servers, `127.0.0.1:9092` advertised; a DNS alias and the broker's own host name): the start-up check
 *   reports a broker that did not answer once, under its advertised address, which its other messages use.
 * - Which broker to ask first for something any broker can answer (where a group's coordinator is): the brokers
 *   that answered the start check first (broker-suspects.ts then moves those that failed lately to the end).
 *
 * Invariants:
 * - Names are compared first as written (case, IPv6 brackets), then by the addresses they resolve to: a name
 *   is one broker's only when every address it resolves to in the brokers' address families is that broker's, on
 *   the same port. Two brokers on one host, or a load balancer's name, are never taken for one broker.
 * - Resolving is bounded by the caller's deadline; a name that does not resolve by then, or at all, matches only
 *   as written, so the worst case is a double report, never a failure left out.
 */
import { lookup } from 'node:dns/promises'
import { resolveAfter } from '../deadline.ts'
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
 * The SERVERS (bootstrap addresses) that are one of BROKERS (advertised `host:port`) under another name: every
 * address a server resolves to is a broker's, on the same port. Nothing when resolving does not finish within
 * TIMEOUT_MS: a server is then taken for a broker of its own.
 */
export async function sameAsBrokers (servers: readonly string[], brokers: readonly string[], timeoutMs: number, resolve: Resolve = resolveHost): Promise<string[]> {
  if (servers.length === 0 || brokers.length === 0) return []
  const resolved = await resolveAfter(resolvedKeys([...servers, ...brokers], resolve), timeoutMs, null)
  if (resolved === null) return []
  const brokerKeys = new Set(brokers.flatMap(b => resolved.get(b) ?? []))
  // Only the address families the brokers have: `localhost` is 127.0.0.1 and ::1 on many hosts, and the client
  // reached 127.0.0.1:9092 through it.
  const families = new Set([...brokerKeys].map(familyOf))
  return servers.filter(s => {
    const keys = (resolved.get(s) ?? []).filter(k => families.has(familyOf(k)))
    return keys.length > 0 && keys.every(k => brokerKeys.has(k))
  })
}

/** 4 or 6, of an `ip:port` key. */
function familyOf (key: string): number {
  return key.slice(0, key.lastIndexOf(':')).includes(':') ? 6 : 4
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


/**
 * The node ids of BROKERS in the order of PREFERRED (`addressKey`s: `bootstrap.servers` as the start check ordered
 * it), brokers not in it after them in their own order.
 */
export function inPreferredOrder (brokers: ReadonlyMap<number, { readonly host: string, readonly port: number }>, preferred: readonly string[]): number[] {
  const rank = (broker: { host: string, port: number }): number => {
    const at = preferred.indexOf(addressKey(`${broker.host}:${broker.port}`))
    return at < 0 ? preferred.length : at
  }
  return [...brokers].map(([nodeId, broker]) => ({ nodeId, rank: rank(broker) })).sort((a, b) => a.rank - b.rank).map(b => b.nodeId)
}
