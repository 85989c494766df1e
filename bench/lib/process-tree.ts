/**
 * CPU time and resident memory of a process and all its descendants, read from /proc (Linux only).
 *
 * Invariants:
 * - CPU of a process is its utime + stime in clock ticks; each pid of the tree keeps the highest value it
 *   was seen with, so a descendant that exits keeps what it had used by its last sample (every 200 ms).
 *   cutime/cstime are left out: they would count a reaped child a second time.
 * - Peak memory is the highest sum of VmRSS over the tree seen in one sample, or the sum of each process's
 *   own peak (VmHWM) if that is higher: exact for a one-process tree (a JVM, a Node process).
 * - Figures only grow; `stop()` takes a last sample and freezes them.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of /proc's CPU figures. */
export const TICKS_PER_SECOND = clockTicks()

function clockTicks (): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
}

export interface StatLine {
  /** The command (a thread's name for /proc/PID/task/TID/stat), as Linux cut it (15 characters). */
  comm: string
  ppid: number
  cpuTicks: number
}

/** comm, ppid and utime+stime from a /proc stat file, or undefined once its process (or thread) is gone. */
export function readStatFile (path: string): StatLine | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const n = (i: number): number => Number(fields[i] ?? 0)
  return { comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), ppid: n(1), cpuTicks: n(11) + n(12) }
}

function readStat (pid: number): StatLine | undefined {
  return readStatFile(`/proc/${pid}/stat`)
}

/** VmRSS and VmHWM of PID in KiB (0 when gone). */
function readMemory (pid: number): { rssKiB: number; hwmKiB: number } {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (key: string): number => Number(text.match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'))?.[1] ?? 0)
    return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') }
  } catch {
    return { rssKiB: 0, hwmKiB: 0 }
  }
}

/** ROOT and every live descendant of it. */
export function processTree (root: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const stat = readStat(pid)
    if (stat === undefined) continue
    const list = children.get(stat.ppid) ?? []
    list.push(pid)
    children.set(stat.ppid, list)
  }
  const tree: number[] = []
  const queue = [root]
  while (queue.length > 0) {
    const pid = queue.shift()!
    tree.push(pid)
    queue.push(...(children.get(pid) ?? []))
  }
  return tree
}

export interface TreeUsage {
  cpuSeconds: number
  peakRssMiB: number
}

export class ProcessTreeSampler {
  private readonly cpuTicks = new Map<number, number>()
  private readonly hwmKiB = new Map<number, number>()
  private peakRssKiB = 0
  private timer: NodeJS.Timeout | undefined
  private readonly roots: number[] = []

  constructor (intervalMs = 200) {
    this.timer = setInterval(() => this.sample(), intervalMs)
  }

  /** Adds a process (and its descendants) to what is measured. */
  watch (pid: number): void {
    this.roots.push(pid)
    this.sample()
  }

  sample (): void {
    let rssKiB = 0
    for (const root of this.roots) {
      for (const pid of processTree(root)) {
        const stat = readStat(pid)
        if (stat !== undefined) this.cpuTicks.set(pid, Math.max(this.cpuTicks.get(pid) ?? 0, stat.cpuTicks))
        const memory = readMemory(pid)
        rssKiB += memory.rssKiB
        this.hwmKiB.set(pid, Math.max(this.hwmKiB.get(pid) ?? 0, memory.hwmKiB))
      }
    }
    this.peakRssKiB = Math.max(this.peakRssKiB, rssKiB)
  }

  usage (): TreeUsage {
    const ticks = [...this.cpuTicks.values()].reduce((a, b) => a + b, 0)
    const hwm = [...this.hwmKiB.values()].reduce((a, b) => a + b, 0)
    return { cpuSeconds: ticks / TICKS_PER_SECOND, peakRssMiB: Math.max(this.peakRssKiB, hwm) / 1024 }
  }

  /** A last sample, then no more: the figures are those at this moment. */
  stop (): TreeUsage {
    if (this.timer !== undefined) {
      this.sample()
      clearInterval(this.timer)
      this.timer = undefined
    }
    return this.usage()
  }
}
