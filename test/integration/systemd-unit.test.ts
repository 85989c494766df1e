/**
 * deploy/systemd/kmirror.service, checked by systemd itself: `systemd-analyze verify` (every key known, values
 * valid, the binary executable) and `systemd-analyze security` (its exposure), plus the policy the unit encodes.
 * Needs systemd-analyze (Debian's `systemd`; .ci/run installs it); skipped, saying so, where it is absent.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { STOP_DEADLINE_MS } from '../../src/cli/run-command.ts'
import { REPO_ROOT } from '../helpers/clusters.ts'

const UNIT = join(REPO_ROOT, 'deploy', 'systemd', 'kmirror.service')
const HAS_SYSTEMD_ANALYZE = spawnSync('systemd-analyze', ['--version']).error === undefined
const SKIP = HAS_SYSTEMD_ANALYZE ? false : 'systemd-analyze is not installed (Debian package `systemd`): the unit file is not checked'

/**
 * A root directory as the unit would be installed: the unit in /etc/systemd/system, an executable at
 * /usr/local/bin/kmirror and this host's system units (verify loads the targets the unit depends on).
 */
function installRoot (t: TestContext, unitText: string): string {
  const root = mkdtempSync(join(tmpdir(), 'kmirror-systemd-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const systemUnits = ['/usr/lib/systemd/system', '/lib/systemd/system'].find(dir => existsSync(join(dir, 'sysinit.target')))
  assert.ok(systemUnits, 'no directory of system units (sysinit.target) on this host')
  cpSync(systemUnits, join(root, 'usr', 'lib', 'systemd', 'system'), { recursive: true, dereference: false })
  mkdirSync(join(root, 'etc', 'systemd', 'system'), { recursive: true })
  writeFileSync(join(root, 'etc', 'systemd', 'system', 'kmirror.service'), unitText)
  mkdirSync(join(root, 'usr', 'local', 'bin'), { recursive: true })
  writeFileSync(join(root, 'usr', 'local', 'bin', 'kmirror'), '#!/bin/sh\n')
  chmodSync(join(root, 'usr', 'local', 'bin', 'kmirror'), 0o755)
  return root
}

function verify (root: string): { status: number | null, output: string } {
  const result = spawnSync('systemd-analyze', ['verify', '--man=no', `--root=${root}`, 'kmirror.service'], { encoding: 'utf8', timeout: 30_000 })
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() }
}

/** The values of KEY in the unit file, in order. */
function values (text: string, key: string): string[] {
  return text.split('\n').filter(line => line.startsWith(`${key}=`)).map(line => line.slice(key.length + 1))
}

test('systemd-analyze verify accepts the unit as installed, with no warning, and catches a misspelt key', { skip: SKIP, timeout: 60_000 }, t => {
  // Given the unit as shipped, installed in a root with the binary in place
  const text = readFileSync(UNIT, 'utf8')
  // When systemd verifies it, Then it passes without a word
  assert.deepEqual(verify(installRoot(t, text)), { status: 0, output: '' })
  // And the same check reports a misspelt key and a missing binary (so the silence above means something)
  const misspelt = verify(installRoot(t, text.replace('NoNewPrivileges=yes', 'NoNewPrivilege=yes')))
  assert.match(misspelt.output, /Unknown key 'NoNewPrivilege'/)
  const root = installRoot(t, text)
  rmSync(join(root, 'usr', 'local', 'bin', 'kmirror'))
  const noBinary = verify(root)
  assert.notEqual(noBinary.status, 0)
  assert.match(noBinary.output, /\/usr\/local\/bin\/kmirror is not executable/)
})

test('the unit restarts on failure except for bad configuration, waits longer than kmirror\'s stop, and is hardened', { skip: SKIP, timeout: 60_000 }, t => {
  const text = readFileSync(UNIT, 'utf8')
  assert.deepEqual(values(text, 'ExecStart'), ['/usr/local/bin/kmirror run /etc/kmirror/mm2.properties $KMIRROR_ARGS'])
  assert.deepEqual(values(text, 'User'), ['kmirror'])
  assert.deepEqual(values(text, 'Restart'), ['on-failure'])
  // Exit 2 is a bad configuration or flag: restarting cannot help. Exit 3 and 4 (fenced, runtime failure) restart.
  assert.deepEqual(values(text, 'RestartPreventExitStatus'), ['2'])
  assert.deepEqual(values(text, 'KillSignal'), ['SIGTERM'])
  const stopSeconds = Number(/^(\d+)s$/.exec(values(text, 'TimeoutStopSec')[0] ?? '')?.[1])
  assert.ok(stopSeconds * 1000 > STOP_DEADLINE_MS + 1000, `TimeoutStopSec ${stopSeconds} s must exceed kmirror's stop deadline of ${STOP_DEADLINE_MS} ms`)
  assert.equal(values(text, 'MemoryMax').length, 1)
  for (const key of ['NoNewPrivileges', 'ProtectSystem', 'PrivateTmp', 'ProtectHome']) assert.equal(values(text, key).length, 1, key)
  // systemd's own score of the sandbox: 0 is fully locked down, 10 unprotected; under 2 is rated "OK"
  const security = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', UNIT], { encoding: 'utf8', timeout: 30_000 })
  const exposure = /Overall exposure level for kmirror\.service: ([\d.]+) (\w+)/.exec(security.stdout)
  assert.ok(exposure, security.stdout + security.stderr)
  t.diagnostic(`systemd-analyze security: exposure ${exposure[1]} ${exposure[2]}`)
  assert.ok(Number(exposure[1]) < 2, `exposure ${exposure[1]}`)
})
