/**
 * A library client whose requests of some APIs (Produce) ask a gate (the group lease) as each one goes out. The
 * library's Producer (record-writer.ts) sends a produce again by itself: up to its `retries`, then a second series
 * after stale metadata, then once more under a fresh producer id after UNKNOWN_PRODUCER_ID, and none of those
 * attempts comes back to kmirror: a check before `Producer.send` is not asked again for them, and an attempt sent
 * 30 s later, past the lease, lands after the records of the partition's new owner. Every attempt passes through
 * `Connection.send`, whose `createPayload` is where kmirror's own requests ask their gate too (negotiation.ts
 * `sendAt`): asked there, no attempt goes out past the lease, whichever retry sends it, and the library keeps its
 * idempotent sequences (an attempt sent again carries the same ones: the broker keeps the batch once). Turning the
 * library's retries off instead would not do: its idempotent producer takes `retries` 0 or 1 as "retry forever",
 * and the resend after a fresh producer id cannot be turned off.
 *
 * Invariants:
 * - A gated request asks the gate once its bytes are built, in the same synchronous step in which the library
 *   writes them to the socket (a built payload waits only for the connection's free slot). So each connection is
 *   handed one request at a time, the next once the previous is answered or failed: none waits in the library's
 *   queue after its gate passed. The library's idempotent producer allows one request in flight per connection
 *   anyway, so nothing goes slower.
 * - A refused request is never written: it fails with the library's UserError (not retriable to the library, so its
 *   retries stop there) caused by the gate's error, a KmirrorError that `toKmirrorError` finds and keeps (FENCED,
 *   retriable to kmirror).
 * - Requests on a connection are handed to it in the order they were asked. Requests of other APIs are not asked
 *   about, only queued.
 */
import { UserError, type Connection, type ConnectionPool } from '@platformatic/kafka'

/** The Produce API's key. */
export const PRODUCE_API_KEY = 0

type SendArgs = Parameters<Connection['send']>
type CreatePayload = SendArgs[2]

const gated = new WeakSet<Connection>()

/** Gates APIS of every connection POOL holds or opens from now on (see the invariants); CHECK throws to refuse. */
export function gateRequests (pool: ConnectionPool, apis: ReadonlySet<number>, check: () => void): void {
  for (const [, connection] of pool) gateConnection(connection, apis, check)
  // Emitted as the connection is made, before anything is sent on it.
  pool.on('connecting', ({ connection }) => { gateConnection(connection, apis, check) })
}

/** Gates APIS of CONNECTION (once: a connection already gated is left as it is). */
export function gateConnection (connection: Connection, apis: ReadonlySet<number>, check: () => void): void {
  if (gated.has(connection)) return
  gated.add(connection)
  const send = connection.send.bind(connection) as (...args: SendArgs) => void
  const waiting: (() => void)[] = []
  let busy = false
  const next = (): void => {
    const start = waiting.shift()
    if (start === undefined) busy = false
    else start()
  }
  const gatedSend = (...args: SendArgs): void => {
    const [apiKey, apiVersion, createPayload, parser, requestTagged, responseTagged, callback] = args
    const start = (): void => {
      let ended = false
      const end = (): void => {
        if (ended) return
        ended = true
        next()
      }
      const payload = apis.has(apiKey) ? checkedPayload(createPayload, check) : createPayload
      try {
        send(apiKey, apiVersion, payload, parser, requestTagged, responseTagged, (error, result) => {
          // Still inside the library's answer handling: the next request goes out in this same step.
          try {
            callback(error, result)
          } finally {
            end()
          }
        })
      } catch (err) {
        end()
        throw err
      }
    }
    if (busy) {
      waiting.push(start)
      return
    }
    busy = true
    start()
  }
  connection.send = gatedSend as Connection['send']
}

/** CREATE, then CHECK (as late as can be: after an asynchronous compression too); a refusal fails the request. */
function checkedPayload (create: CreatePayload, check: () => void): CreatePayload {
  return () => {
    const payload = create()
    if (isPromise(payload)) return payload.then(built => { refuseUnlessOpen(check); return built })
    refuseUnlessOpen(check)
    return payload
  }
}

/** As the library tells an asynchronous payload (gzip compresses asynchronously). */
function isPromise<T> (value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown }).then === 'function'
}

function refuseUnlessOpen (check: () => void): void {
  try {
    check()
  } catch (err) {
    const cause = err instanceof Error ? err : new Error(String(err))
    throw new UserError(`request not sent: ${cause.message}`, { cause })
  }
}
