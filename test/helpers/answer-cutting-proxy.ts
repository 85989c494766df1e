/**
 * The "lost acknowledgement" fault: a TCP proxy in front of a real broker's listener that passes every request and
 * answer through, except that, once armed, it cuts the connection (both sides) instead of passing on the answer of
 * the next large Produce request. The broker has handled that request (appended its batches) and the client sees a
 * lost connection with the request in flight: its outcome is unknown to the client. Not a mock broker: every
 * request is answered by the real one; the proxy only reads Kafka's frame sizes, API keys and correlation ids.
 * The "slow broker" fault too: once armed with a delay, the answer of the next large Produce request, and every
 * answer after it on that connection (Kafka answers a connection's requests in order), is held that long.
 *
 * The broker must advertise the proxy's address on the proxied listener, so that clients bootstrapping through the
 * proxy keep using it (kafka-local.sh's `auth` cluster: listener PROXIED, AUTH_LISTENERS.proxied).
 */
import { createServer, connect, type Socket } from 'node:net'
import type { Cleanup } from './kafka.ts'

const PRODUCE = 0

export interface AnswerCuttingProxy {
  /** Cuts the connection instead of passing on the answer of the next Produce request of at least `minBytes`. */
  readonly armForProduce: (minBytes: number) => void
  /** Connections cut so far, and the size of each cut Produce request. */
  readonly cuts: () => number[]
  /** Holds the answer of the next Produce request of at least `minBytes`, and those after it on its connection, for `ms`. */
  readonly holdProduce: (minBytes: number, ms: number) => void
  /** The sizes of the Produce requests whose answer was held. */
  readonly held: () => number[]
}

/** Calls `onFrame` with each whole size-prefixed Kafka frame (size included) as its bytes arrive. */
function frames (onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0)
  return chunk => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = 4 + pending.readInt32BE(0)
      onFrame(pending.subarray(0, size))
      pending = pending.subarray(size)
    }
  }
}

/** Listens on `listenPort` of 127.0.0.1 and forwards to `upstreamPort` until the test ends. */
export async function startAnswerCuttingProxy (t: Cleanup, listenPort: number, upstreamPort: number): Promise<AnswerCuttingProxy> {
  const sockets = new Set<Socket>()
  const cuts: number[] = []
  let armedFor: number | null = null
  let holdFor: { minBytes: number, ms: number } | null = null
  const held: number[] = []
  const server = createServer(client => {
    const upstream = connect(upstreamPort, '127.0.0.1')
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('error', () => undefined)
      s.on('close', () => { sockets.delete(s); client.destroy(); upstream.destroy() })
    }
    // Correlation id -> (API key, request bytes) of the requests in flight on this connection.
    const requests = new Map<number, { apiKey: number, bytes: number }>()
    client.on('data', frames(frame => {
      requests.set(frame.readInt32BE(8), { apiKey: frame.readInt16BE(4), bytes: frame.length })
      upstream.write(frame)
    }))
    // Answers held back on this connection (null: none), passed on in order when the hold ends.
    let holding: Buffer[] | null = null
    upstream.on('data', frames(frame => {
      const correlationId = frame.readInt32BE(4)
      const request = requests.get(correlationId)
      requests.delete(correlationId)
      if (request?.apiKey === PRODUCE && armedFor !== null && request.bytes >= armedFor) {
        armedFor = null
        cuts.push(request.bytes)
        client.destroy()
        upstream.destroy()
        return
      }
      if (request?.apiKey === PRODUCE && holdFor !== null && request.bytes >= holdFor.minBytes && holding === null) {
        const queue: Buffer[] = []
        holding = queue
        held.push(request.bytes)
        setTimeout(() => {
          holding = null
          for (const answer of queue) client.write(answer)
        }, holdFor.ms)
        holdFor = null
      }
      if (holding !== null) holding.push(frame)
      else client.write(frame)
    }))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(listenPort, '127.0.0.1', () => resolve())
  })
  t.after(() => new Promise<void>(resolve => {
    for (const s of sockets) s.destroy()
    server.close(() => resolve())
  }))
  return {
    armForProduce: minBytes => { armedFor = minBytes },
    cuts: () => [...cuts],
    holdProduce: (minBytes, ms) => { holdFor = { minBytes, ms } },
    held: () => [...held]
  }
}
