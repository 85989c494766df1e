/**
 * Brokers that lately failed a request on the network or by timeout (or whose data-path fetch is out past its
 * round: fetch-rounds.ts), tried last by the requests any broker can answer (Metadata of the data path,
 * FindCoordinator of a group or transactional id, InitProducerId, a group describe's lookups): `askAnyBroker`,
 * or `suspectsLast` and `noteOutcome` where the connection is got elsewhere.
 *
 * Why: a wedged broker (frozen, in a long pause, half cut off) accepts connections and never answers. The client
 * library's `getFirstAvailable` takes the first broker of a list that accepts a connection, so a wedged broker
 * listed first was asked again after every timeout, for as long as it stayed wedged: a group member could never
 * find its coordinator's new home, lost its membership and stopped copying while the rest of the cluster was fine.
 *
 * Invariants:
 * - Ordering only, never exclusion: every broker of the list stays in it, so a cluster whose only answering broker
 *   is a suspect is still asked.
 * - Suspects go last, the least recently failed first among them; the others keep their order (bootstrap.servers
 *   as the start check ordered it: the brokers that answered first).
 * - One record per process, keyed by `addressKey`: any client of the process that saw a broker fail spares the
 *   others its timeout. A suspicion lapses after SUSPECT_MS, or when the broker answers one of these requests.
 */
import { AuthenticationError, type Broker, type Connection, type ConnectionPool } from '@platformatic/kafka'
import { searchErrorTree } from './error-tree.ts'
import { isNetworkError, isTimeoutError } from './errors.ts'
import { addressKey } from './same-broker.ts'
import { markSilent } from './silent-brokers.ts'
import { RequestTimeout } from './protocol/negotiation.ts'

/** How long a broker that failed stays at the end of the lists. */
export const SUSPECT_MS = 60_000

interface Address { readonly host: string, readonly port: number }

/** addressKey → when it failed (epoch ms). */
const failedAt = new Map<string, number>()

/** BROKERS, suspects last (the least recently failed first among them), the others in their order. */
export function suspectsLast<T extends Address> (brokers: readonly T[], now = Date.now()): T[] {
  if (failedAt.size === 0) return [...brokers]
  const since = (b: T): number | undefined => {
    const at = failedAt.get(addressKey(`${b.host}:${b.port}`))
    return at !== undefined && now - at < SUSPECT_MS ? at : undefined
  }
  const fine = brokers.filter(b => since(b) === undefined)
  const suspects = brokers.filter(b => since(b) !== undefined).sort((x, y) => since(x)! - since(y)!)
  return [...fine, ...suspects]
}

/**
 * Notes how a request to BROKER ended: a network failure or timeout makes it a suspect; an answer clears it. A
 * refused authentication (which the library reports as a network failure) says nothing of the broker's health. A
 * request unanswered on an established connection (`RequestTimeout`, not a connection attempt that timed out) also
 * makes the broker silent (silent-brokers.ts): this process's connections to it are cut.
 */
export function noteOutcome (broker: Address, err?: unknown, now = Date.now()): void {
  const key = addressKey(`${broker.host}:${broker.port}`)
  if (err === undefined) {
    failedAt.delete(key)
    return
  }
  if (refusedAuthentication(err)) return
  if (isTimeoutError(err) || isNetworkError(err)) failedAt.set(key, now)
  const unanswered = searchErrorTree(err, e => (e instanceof RequestTimeout ? e : undefined))
  if (unanswered !== undefined) markSilent(broker, unanswered.message, now)
}

/** BROKER is a suspect from NOW, whatever a request of its last said (its cluster fenced it: fenced-brokers.ts). */
export function suspect (broker: Address, now = Date.now()): void {
  failedAt.set(addressKey(`${broker.host}:${broker.port}`), now)
}

/**
 * ASK sent to the first of BROKERS that takes a connection, suspects last; the outcome noted. Throws what ASK throws.
 * The library tries the brokers in order and keeps their connect failures to itself: the brokers before the one
 * that took the connection failed to connect, and so did all of them when none did (unless authentication was
 * refused: that says nothing of their health). Those become suspects too.
 */
export async function askAnyBroker<T> (pool: Pick<ConnectionPool, 'getFirstAvailable'>, brokers: readonly Broker[], ask: (connection: Connection) => Promise<T>): Promise<T> {
  const ordered = suspectsLast(brokers)
  let connection: Connection
  try {
    connection = await pool.getFirstAvailable(ordered)
  } catch (err) {
    if (!refusedAuthentication(err)) suspectUntil(ordered, undefined)
    throw err
  }
  const asked = addressOf(connection)
  suspectUntil(ordered, asked)
  try {
    const answer = await ask(connection)
    if (asked !== undefined) noteOutcome(asked)
    return answer
  } catch (err) {
    if (asked !== undefined) noteOutcome(asked, err)
    throw err
  }
}

/** Every one of ORDERED before TOOK (all of them when TOOK is undefined) becomes a suspect. */
function suspectUntil (ordered: readonly Address[], took: Address | undefined, now = Date.now()): void {
  const tookKey = took === undefined ? undefined : addressKey(`${took.host}:${took.port}`)
  for (const broker of ordered) {
    const key = addressKey(`${broker.host}:${broker.port}`)
    if (key === tookKey) return
    failedAt.set(key, now)
  }
}

function refusedAuthentication (err: unknown): boolean {
  return searchErrorTree(err, e => (e instanceof AuthenticationError ? true : undefined)) === true
}

/** The address of a connection just obtained (read at once: the library's getter is not to be relied on once closed). */
export function addressOf (connection: { readonly host?: string | undefined, readonly port?: number | undefined }): Address | undefined {
  return connection.host === undefined || connection.port === undefined ? undefined : { host: connection.host, port: connection.port }
}

/** Forgets every suspicion (tests). */
export function clearSuspects (): void {
  failedAt.clear()
}
