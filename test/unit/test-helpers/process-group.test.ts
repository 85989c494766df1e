/**
 * Stopping a whole process group (test/helpers/process-group.ts), which run-tests relies on to leave no
 * `kmirror run` or MM2 JVM behind when a run is interrupted: a grandchild whose parent died without cleaning up
 * is stopped, and one that ignores SIGTERM gets SIGKILL after the grace period.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { signalGroup, spawnInOwnGroup, stopGroup } from '../../helpers/process-group.ts'
import { waitFor, waitForValue } from '../../helpers/wait.ts'

/**
 * A group leader that starts a grandchild and exits at once, as a test process killed before its t.after hooks
 * would: the grandchild (ignoring SIGTERM when asked) is left running, and prints its pid once it is ready.
 */
function leaderScript (ignoreTerm: boolean): string {
  const grandchild = `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} console.log(process.pid); setInterval(() => {}, 1000)`
  return `const { spawn } = require('node:child_process');
spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: ['ignore', 'inherit', 'inherit'] }).unref();
process.exit(0)`
}

/** Alive and not a zombie (an orphan is reaped by whatever init this machine has, maybe late). */
function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

async function startOrphan (t: { after: (fn: () => void) => void }, ignoreTerm: boolean): Promise<{ pgid: number, orphan: number }> {
  const leader = spawnInOwnGroup(process.execPath, ['-e', leaderScript(ignoreTerm)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  leader.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  await once(leader, 'exit')
  const orphan = await waitForValue(() => ({ done: /^\d+\n/.test(out), state: Number(out.trim()) }), { timeoutMs: 10_000, message: 'the grandchild printed its pid' })
  t.after(() => { if (isAlive(orphan)) process.kill(orphan, 'SIGKILL') })
  assert.ok(isAlive(orphan), 'the grandchild outlives its parent')
  return { pgid: leader.pid!, orphan }
}

test('stopping a group stops the process a dead group member left running', async t => {
  const { pgid, orphan } = await startOrphan(t, false)
  assert.equal(await stopGroup(pgid, 5000), true)
  await waitFor(() => !isAlive(orphan), { timeoutMs: 5000, message: `process ${orphan} stopped by SIGTERM` })
  assert.equal(signalGroup(pgid, 0), false, 'the group is empty')
  assert.equal(await stopGroup(pgid, 5000), false, 'stopping an empty group signals nothing')
})

test('a group member that ignores SIGTERM gets SIGKILL once the grace period is over', async t => {
  const { pgid, orphan } = await startOrphan(t, true)
  const started = Date.now()
  assert.equal(await stopGroup(pgid, 500), true)
  await waitFor(() => !isAlive(orphan), { timeoutMs: 5000, message: `process ${orphan} stopped by SIGKILL` })
  assert.ok(Date.now() - started >= 500, 'SIGKILL only after the grace period')
})
