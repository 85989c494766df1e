/**
 * Flags as users type them (a child process; no Kafka: the brokers named do not exist, so any command that got
 * as far as a cluster would fail differently). Bad flags exit 2 before anything is contacted.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'

const MAIN = join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'main.ts')
const dir = mkdtempSync(join(tmpdir(), 'kmirror-flags-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const FILE = join(dir, 'mm2.properties')
writeFileSync(FILE, 'clusters = primary, backup\nprimary.bootstrap.servers = nowhere.invalid:9092\nbackup.bootstrap.servers = nowhere.invalid:9093\nprimary->backup.enabled = true\n')

function kmirror (...args: string[]): { code: number | null, stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 20_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('list flags', () => {
  it('validate --clusters backup mm2.properties keeps the file out of the list', () => {
    const { code, stdout } = kmirror('validate', '--clusters', 'backup', FILE)
    assert.equal(code, 0)
    assert.match(stdout, /primary->backup/)
  })

  it('accepts comma lists, repeated flags and the older space-separated spelling', () => {
    for (const args of [['--clusters', 'primary,backup', FILE], ['--clusters', 'primary', '--clusters', 'backup', FILE], ['--clusters', 'primary', 'backup', FILE], [FILE, '--clusters', 'primary', 'backup']]) {
      const { code, stdout } = kmirror('validate', ...args)
      assert.equal(code, 0, args.join(' '))
      assert.match(stdout, /primary->backup/)
    }
  })
})

describe('flag values checked before any cluster is contacted', () => {
  it('refuses --progress-interval abc instead of reading it as off', () => {
    const { code, stderr } = kmirror('run', '--progress-interval', 'abc', FILE)
    assert.equal(code, 2)
    assert.match(stderr, /'abc' is not a number of seconds \(0 or more; 0 = none\)/)
  })

  it('refuses a port that is not one', () => {
    const { code, stderr } = kmirror('run', '--http-port', '70000', FILE)
    assert.equal(code, 2)
    assert.match(stderr, /'70000' is not a TCP port/)
  })

  it('refuses a regex that does not compile', () => {
    const { code, stderr } = kmirror('failover', '--from', 'primary', '--to', 'backup', '--groups', 'a(', FILE)
    assert.equal(code, 2)
    assert.match(stderr, /'a\(' is not a Java regex kmirror can use/)
  })

  it('says what is wrong with --from X --to X, not "invalid configuration"', () => {
    for (const command of [['failover', '--group', 'g'], ['failback', '--group', 'g'], ['offsets', 'translate', '--group', 'g'], ['verify']]) {
      const { code, stderr } = kmirror(...command, '--from', 'primary', '--to', 'primary', FILE)
      assert.equal(code, 2, command.join(' '))
      assert.match(stderr, /--from and --to are both 'primary': give the two different clusters of a flow/)
      assert.doesNotMatch(stderr, /invalid configuration/)
    }
  })
})

describe('offsets set flags, as kafka-consumer-groups.sh --reset-offsets takes them', () => {
  const csv = join(dir, 'reset.csv')
  writeFileSync(csv, 'orders,0,4\n')
  const set = (...args: string[]): { code: number | null, stderr: string } => kmirror('offsets', 'set', FILE, '--cluster', 'backup', ...args)
  const cases: [string[], RegExp][] = [
    [['--group', 'g', '--topic', 'orders', '--to-earliest', '--dry-run', '--execute'], /--dry-run and --execute contradict each other/],
    [['--group', 'g', '--topic', 'orders', '--to-earliest', '--dry-run', '--apply'], /--dry-run and --apply contradict each other/],
    [['--group', 'g', '--topic', 'orders:0,x', '--to-earliest'], /'orders:0,x': partitions must be whole numbers 0 or more separated by commas, e\.g\. orders:0,2/],
    [['--topic', 'orders', '--to-earliest'], /give --group G \(one or more\) or --all-groups/],
    [['--group', 'g', '--all-groups', '--topic', 'orders', '--to-earliest'], /give either --group G \(one or more\) or --all-groups, not both/],
    [['--group', 'g', '--to-earliest'], /give exactly one of --topic T \(or T:0,2; one or more\), --all-topics, --from-file CSV/],
    [['--group', 'g', '--topic', 'orders', '--all-topics', '--to-earliest'], /give exactly one of --topic T/],
    [['--group', 'g', '--topic', 'orders', '--to-offset', '-1'], /--to-offset must be an offset 0 or more, got -1/],
    [['--group', 'g', '--topic', 'orders', '--by-duration', '1h'], /--by-duration accepts an ISO 8601 duration only/],
    [['--group', 'g', '--topic', 'orders', '--to-earliest', '--export', '--json'], /--export prints CSV and --json prints JSON/],
    [['--all-groups', '--from-file', csv], /reset\.csv has lines topic,partition,offset: give exactly one --group/],
    [['--group', 'g', '--from-file', join(dir, 'missing.csv')], /--from-file .*missing\.csv cannot be read/],
    [['--group', 'g', '--topic', 'orders', '--to-current', '--to-latest'], /give exactly one of --to-offset N/],
    [['--group', 'g', '--topic', 'orders', '--to-earliest', '--timeout', 'abc'], /--timeout must be a number of seconds above 0, got 'abc'/]
  ]
  for (const [args, message] of cases) {
    it(`exits 2 on ${args.slice(2).join(' ')}`, () => {
      const { code, stderr } = set(...args)
      assert.equal(code, 2, stderr)
      assert.match(stderr, message)
    })
  }
})

describe('--log-level', () => {
  // Clusters on a closed port: the start retries, warning each time, until SIGTERM stops it (info lines at both levels)
  const closed = join(dir, 'closed.properties')
  writeFileSync(closed, 'clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n')

  /** `kmirror run` until its first warning, then SIGTERM: its exit code and the level of each line it logged. */
  async function levelsUntilStopped (args: string[]): Promise<{ code: number | null, levels: string[] }> {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'KMIRROR_LOG_LEVEL'))
    const child = spawn(process.execPath, [MAIN, 'run', closed, '--progress-interval', '0', ...args], { env: inherited, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    const exited = once(child, 'exit')
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk
        if (stderr.includes('"level":"warn"')) resolve()
      })
      void exited.then(() => reject(new Error(`kmirror exited before warning:\n${stderr}`)))
    })
    child.kill('SIGTERM')
    const [code] = await exited as [number | null]
    return { code, levels: stderr.split('\n').filter(l => l !== '').map(l => (JSON.parse(l) as { level: string }).level) }
  }

  it('by default writes info lines (the stop during start-up) besides the warnings', { timeout: 30_000 }, async () => {
    const { code, levels } = await levelsUntilStopped([])
    assert.equal(code, 0)
    assert.ok(levels.includes('warn') && levels.includes('info'), levels.join(' '))
  })

  it('--log-level warn writes the warnings and no info line', { timeout: 30_000 }, async () => {
    const { code, levels } = await levelsUntilStopped(['--log-level', 'warn'])
    assert.equal(code, 0)
    assert.ok(levels.length > 0 && levels.every(l => l === 'warn'), levels.join(' '))
  })

  it('refuses a level it does not know, naming the choices', () => {
    const { code, stderr } = kmirror('run', '--log-level', 'loud', FILE)
    assert.equal(code, 2)
    assert.match(stderr, /option '--log-level <level>' argument 'loud' is invalid\. Allowed choices are fatal, error, warn, info, debug, trace, silent/)
  })
})

describe('--http-host', () => {
  const closed = join(dir, 'closed-http.properties')
  writeFileSync(closed, 'clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n')
  /** This host's first non-loopback IPv4 address (none in some sandboxes: the checks on it are then skipped). */
  const external = Object.values(networkInterfaces()).flat().find(i => i !== undefined && !i.internal && i.family === 'IPv4')?.address
  const skip = external === undefined ? 'this host has no non-loopback IPv4 address' : false

  /** Whether a TCP connection to HOST:PORT is accepted (true) or refused (false). */
  async function accepts (host: string, port: number): Promise<boolean> {
    return await new Promise((resolve, reject) => {
      const socket = connect(port, host, () => { socket.destroy(); resolve(true) })
      socket.on('error', (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED' ? resolve(false) : reject(err))
    })
  }

  /** `kmirror run ARGS --http-port 0` (clusters on a closed port: the endpoint starts before them): the port it serves. */
  async function serving (args: string[]): Promise<{ port: number, stop: () => Promise<void> }> {
    const child = spawn(process.execPath, [MAIN, 'run', closed, '--progress-interval', '0', '--http-port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    const exited = once(child, 'exit')
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk
        const match = /"port":(\d+)[^\n]*HTTP endpoint/.exec(stderr)
        if (match !== null) resolve(Number(match[1]))
      })
      void exited.then(() => reject(new Error(`kmirror exited before serving:\n${stderr}`)))
    })
    return { port, stop: async () => { child.kill('SIGTERM'); await exited } }
  }

  it('without it the endpoint listens on 127.0.0.1 only: another address of the host is refused', { skip, timeout: 30_000 }, async () => {
    const { port, stop } = await serving([])
    try {
      assert.equal(await accepts('127.0.0.1', port), true)
      assert.equal(await accepts(external!, port), false, `${external}:${port} accepted a connection`)
    } finally {
      await stop()
    }
  })

  it('--http-host 0.0.0.0 listens on every interface', { skip, timeout: 30_000 }, async () => {
    const { port, stop } = await serving(['--http-host', '0.0.0.0'])
    try {
      assert.equal(await accepts(external!, port), true)
    } finally {
      await stop()
    }
  })
})
