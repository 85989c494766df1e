/**
 * A library client (producer, admin, consumer) that asks the brokers that lately answered first: its lookups of
 * any broker (metadata, the bootstrap connection) go through its connection pool's `getFirstAvailable`, which takes
 * the first broker of its list that accepts a connection. A wedged broker accepts connections and answers nothing,
 * so a client whose list starts with it (bootstrap.servers in that order, or its metadata cleared after a silence)
 * waited a whole request timeout on each lookup. Here the list is ordered suspects last (broker-suspects.ts), as
 * kmirror's own requests to any broker are.
 *
 * Invariants:
 * - Ordering only: the client still asks every broker of its list.
 * - Only the pool the client reads its metadata through (the library's `kConnections`, found by its symbol's
 *   description: the library does not export it). Unit tests check that it is still found, so a library upgrade
 *   that renames it fails there, not silently in production.
 */
import { ConnectionPool } from '@platformatic/kafka'
import { suspectsLast } from './broker-suspects.ts'
import { watchClient } from './silent-brokers.ts'

const CONNECTIONS = 'plt.kafka.base.connections'

/** The pool CLIENT reads its metadata through, or null when the library no longer keeps it where it did. */
export function metadataPool (client: object): ConnectionPool | null {
  const symbol = Object.getOwnPropertySymbols(client).find(s => s.description === CONNECTIONS)
  const pool: unknown = symbol === undefined ? undefined : (client as Record<symbol, unknown>)[symbol]
  return pool instanceof ConnectionPool ? pool : null
}

/** CLIENT, asking suspects last, watched for silences (silent-brokers.ts) and labelled with its CLUSTER. */
export function watchedLibraryClient<C extends Parameters<typeof watchClient>[0] & object> (client: C, cluster: string): C {
  const pool = metadataPool(client)
  if (pool !== null) {
    const getFirstAvailable = pool.getFirstAvailable.bind(pool) as (brokers: Parameters<ConnectionPool['getFirstAvailable']>[0], callback?: unknown) => unknown
    pool.getFirstAvailable = ((brokers: Parameters<ConnectionPool['getFirstAvailable']>[0], callback?: unknown) =>
      getFirstAvailable(suspectsLast(brokers), callback)) as ConnectionPool['getFirstAvailable']
  }
  return watchClient(client, cluster)
}
