/**
 * A child process in a process group of its own, and stopping that whole group.
 *
 * scripts/run-tests.ts starts `node --test` this way: every test file, every `kmirror run` a test spawns and
 * every MM2 JVM that `kafka-local.sh mm2` starts inherits the group, so an interrupted run (watchdog, SIGINT,
 * SIGTERM) stops them all, including those whose test process died before its t.after hooks ran. Brokers
 * leave the group (kafka-local.sh starts them with setsid): they outlive a run on purpose (KMIRROR_KEEP_CLUSTERS)
 * and are stopped through their pid files.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { setTimeout as delay } from 'node:timers/promises'

/** Starts FILE ARGS as the leader of a new process group (its pid is the group id). */
export function spawnInOwnGroup (file: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(file, args, { ...options, detached: true })
}

/** Sends SIGNAL to every process of group PGID; false when the group has no process left. */
export function signalGroup (pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

/**
 * Stops group PGID: SIGNAL to every member, then SIGKILL to those still there after GRACE_MS.
 * Resolves with false when the group was already empty (nothing was signalled).
 */
export async function stopGroup (pgid: number, graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<boolean> {
  if (!signalGroup(pgid, signal)) return false
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    await delay(100)
    if (!signalGroup(pgid, 0)) return true
  }
  signalGroup(pgid, 'SIGKILL')
  return true
}
