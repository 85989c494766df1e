/**
 * The "silent broker" fault: a TCP listener that accepts connections and never answers a byte, as a wedged
 * broker, a wrong port or a TLS client on a plaintext listener looks to a Kafka client. Not a mock broker: it
 * speaks no Kafka at all.
 */
import { createServer, type Socket } from 'node:net'
import type { Cleanup } from './kafka.ts'

export interface SilentBroker {
  /** `127.0.0.1:port` */
  readonly address: string
  /** Connections accepted so far. */
  readonly accepted: () => number
}

/** Listens on a free port of 127.0.0.1 until the test ends. */
export async function startSilentBroker (t: Cleanup): Promise<SilentBroker> {
  const sockets = new Set<Socket>()
  let accepted = 0
  const server = createServer(socket => {
    accepted++
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  t.after(() => new Promise<void>(resolve => {
    for (const s of sockets) s.destroy()
    server.close(() => resolve())
  }))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the silent broker has no TCP address')
  return { address: `127.0.0.1:${address.port}`, accepted: () => accepted }
}
