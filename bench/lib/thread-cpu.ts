/**
 * CPU seconds of a process split by what its threads do, from /proc/PID/task/TID/stat: for a Kafka broker, its JIT
 * compilers, garbage collector, request handling (network threads and handlers) and metadata (partition creation)
 * thread. Why: on this 2-core machine a replicator's run is paced by how much CPU the target broker gets, and a
 * freshly started broker spends about 40-55 % of its CPU compiling its own code (bench/RESULTS.md, session 44); the
 * total alone cannot tell that from work a replicator's requests cause.
 *
 * A thread started during a step counts from zero; one that ended during it is missed (HotSpot may end a compiler
 * thread it started; on 2 cores it runs one of each kind, never ended).
 */
import { readdirSync } from 'node:fs'
import { readStatFile, TICKS_PER_SECOND } from './process-tree.ts'

/** CPU ticks (user + system) by thread id, with the thread's kind; empty when the process cannot be read. */
export type ThreadTicks = ReadonlyMap<string, { readonly kind: string, readonly ticks: number }>

/**
 * What a JVM thread does, from its name (`comm`, which Linux cuts at 15 characters): "C2 CompilerThre" → JIT. On
 * Kafka 4.x the network threads, acceptors and request handlers all show as "data-plane-kafk": "requests" is all of
 * request handling, socket I/O included (before 3.x handlers, "kafka-request-h", are counted there too).
 */
export function threadKind (comm: string): string {
  if (/Compiler/.test(comm)) return 'JIT'
  if (/^(GC|G1)/.test(comm) || comm === 'VM Thread') return 'GC'
  if (comm.startsWith('data-plane-kafk') || comm.startsWith('kafka-request-h') || /network-thr|kafka-network/.test(comm)) return 'requests'
  if (/metadat/.test(comm)) return 'metadata'
  return 'other'
}

export function threadTicks (pid: number | string | undefined): ThreadTicks {
  const ticks = new Map<string, { kind: string, ticks: number }>()
  if (pid === undefined) return ticks
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return ticks
  }
  for (const tid of tasks) {
    // (undefined: the thread ended meanwhile)
    const stat = readStatFile(`/proc/${pid}/task/${tid}/stat`)
    if (stat !== undefined) ticks.set(tid, { kind: threadKind(stat.comm), ticks: stat.cpuTicks })
  }
  return ticks
}

/** CPU seconds used between two readings, in all and by kind (largest first); null when either could not be read. */
export function cpuBetween (before: ThreadTicks, after: ThreadTicks): { total: number, byKind: [string, number][] } | null {
  if (before.size === 0 || after.size === 0) return null
  const byKind = new Map<string, number>()
  for (const [tid, { kind, ticks }] of after) byKind.set(kind, (byKind.get(kind) ?? 0) + ticks - (before.get(tid)?.ticks ?? 0))
  const seconds = [...byKind].map(([kind, t]): [string, number] => [kind, t / TICKS_PER_SECOND]).sort((a, b) => b[1] - a[1])
  return { total: seconds.reduce((n, [, s]) => n + s, 0), byKind: seconds }
}

/** "29.1 s (JIT 11.9, metadata 9.2, requests 3.6, …)": kinds under 0.1 s left out. */
export function formatCpu (used: { total: number, byKind: [string, number][] }): string {
  const kinds = used.byKind.filter(([, s]) => s >= 0.1).map(([kind, s]) => `${kind} ${s.toFixed(1)}`)
  return kinds.length === 0 ? `${used.total.toFixed(1)} s` : `${used.total.toFixed(1)} s (${kinds.join(', ')})`
}
