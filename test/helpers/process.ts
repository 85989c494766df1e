/**
 * Running kmirror as a child process the way users run it, and writing its config files.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT, resolveCluster, type ClusterRef, type TestCluster } from './clusters.ts'
import type { Cleanup } from './kafka.ts'
import { NODE_FLAGS } from '../../src/cli/node-flags.ts'

export const KMIRROR_MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts')

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface KmirrorProcess {
  readonly pid: number
  /** Everything written so far (accumulated, never cleared). */
  readonly stdout: string
  readonly stderr: string
  /** Set once the process has exited. */
  readonly exitStatus: ExitStatus | null
  /**
   * Resolves with the first match of RE in stdout+stderr (already written or still to come); rejects
   * with the output so far on timeout or when the process exits without writing it.
   */
  waitForOutput (re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>
  /** Resolves with how it exited; rejects on timeout (the process is left running). */
  waitForExit (timeoutMs: number): Promise<ExitStatus>
  /** Sends SIGNAL (SIGTERM by default: graceful; SIGKILL: crash). No-op once exited. */
  kill (signal?: NodeJS.Signals): void
}

export interface SpawnOptions {
  /** Added to (and overriding) the parent's environment. */
  env?: Record<string, string | undefined>
  cwd?: string
  /** Registers a SIGKILL of the process (if still running) with t.after. */
  t?: Cleanup
  /**
   * Runs this executable with ARGS (the single executable `dist/kmirror-linux-x64`) instead of the sources; its
   * environment is then `env` alone, nothing of the parent's.
   */
  executable?: string
  /**
   * Runs it under this host name (`unshare --uts`, which needs root): a Kubernetes pod's name, dashes and all, as
   * kmirror's member names carry it. unshare and sh exec the next program, so the process keeps its pid.
   */
  hostname?: string
}

/** The command line of `spawnKmirror`. */
function commandLine (args: readonly string[], executable: string | undefined, hostname: string | undefined): [string, string[]] {
  const line = executable === undefined ? [process.execPath, ...NODE_FLAGS, KMIRROR_MAIN, ...args] : [executable, ...args]
  if (hostname === undefined) return [line[0]!, line.slice(1)]
  return ['unshare', ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', hostname, ...line]]
}

/**
 * With KMIRROR_TEST_KEEP_OUTPUT=DIR, every kmirror process a test started leaves its output in DIR once it exits
 * (`<pid>-<command>.log`): the whole account of a run that failed, which an assertion message only quotes the end of.
 */
function keepOutput (args: readonly string[], pid: number | undefined, stdout: string, stderr: string): void {
  const dir = process.env['KMIRROR_TEST_KEEP_OUTPUT']
  if (dir === undefined || dir === '') return
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${pid ?? 'unknown'}-${args[0] ?? 'kmirror'}.log`), `# kmirror ${args.join(' ')}\n${stdout}${stderr}`)
}

/** Starts `node NODE_FLAGS src/cli/main.ts ARGS` with this Node binary, as the `kmirror` command does (or `executable ARGS`). */
export function spawnKmirror (args: readonly string[], { env, cwd, t, executable, hostname }: SpawnOptions = {}): KmirrorProcess {
  const [command, commandArgs] = commandLine(args, executable, hostname)
  const child = spawn(command, commandArgs, {
    cwd: cwd ?? REPO_ROOT,
    env: executable === undefined ? { ...process.env, ...env } : { ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  let exitStatus: ExitStatus | null = null
  const listeners = new Set<() => void>()
  const notify = (): void => {
    for (const listener of [...listeners]) listener()
  }
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    notify()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    notify()
  })
  const exited = new Promise<ExitStatus>(resolve => {
    child.once('close', (code, signal) => {
      exitStatus = { code, signal }
      keepOutput(args, child.pid, stdout, stderr)
      resolve(exitStatus)
      notify()
    })
    child.once('error', error => {
      stderr += `\n[spawn error] ${error.message}\n`
      exitStatus = { code: null, signal: null }
      resolve(exitStatus)
      notify()
    })
  })
  const kill = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (exitStatus === null) child.kill(signal)
  }
  t?.after(async () => {
    if (exitStatus !== null) return
    kill('SIGKILL')
    await exited
  })
  const tail = (): string => `--- stdout (tail) ---\n${stdout.slice(-4000)}\n--- stderr (tail) ---\n${stderr.slice(-4000)}`

  return {
    get pid () {
      return child.pid ?? -1
    },
    get stdout () {
      return stdout
    },
    get stderr () {
      return stderr
    },
    get exitStatus () {
      return exitStatus
    },
    kill,
    waitForOutput (re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const match = stdout.match(re) ?? stderr.match(re)
          if (match) return finish(() => resolve(match))
          if (exitStatus !== null) {
            finish(() => reject(new Error(`kmirror exited (${JSON.stringify(exitStatus)}) without writing ${re}\n${tail()}`)))
          }
        }
        const timer = setTimeout(() => finish(() => reject(new Error(`kmirror did not write ${re} within ${timeoutMs} ms\n${tail()}`))), timeoutMs)
        const finish = (settle: () => void): void => {
          clearTimeout(timer)
          listeners.delete(check)
          settle()
        }
        listeners.add(check)
        check()
      })
    },
    waitForExit (timeoutMs) {
      if (exitStatus !== null) return Promise.resolve(exitStatus)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kmirror (pid ${child.pid}) still running after ${timeoutMs} ms\n${tail()}`)), timeoutMs)
        void exited.then(status => {
          clearTimeout(timer)
          resolve(status)
        })
      })
    }
  }
}

/** Writes CONTENT to a new file ending in SUFFIX (e.g. '.properties') in a fresh temp directory. */
export function writeTempFile (content: string, suffix = '', t?: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'kmirror-test-'))
  t?.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, `file${suffix}`)
  writeFileSync(file, content)
  return file
}

export interface Mm2PropertiesOptions {
  source: ClusterRef
  target: ClusterRef
  /** Aliases of the two clusters: A and B by default. */
  sourceAlias?: string
  targetAlias?: string
  /** More lines, appended verbatim (e.g. 'A->B.topics = orders.*'). */
  extra?: readonly string[]
}

const INTERNAL_RF_KEYS = [
  'replication.factor',
  'offset-syncs.topic.replication.factor',
  'checkpoints.topic.replication.factor',
  'heartbeats.topic.replication.factor',
  'offset.storage.replication.factor',
  'status.storage.replication.factor',
  'config.storage.replication.factor'
]

function clusterLines (alias: string, cluster: TestCluster): string[] {
  const lines = [`${alias}.bootstrap.servers = ${cluster.bootstrap}`]
  if (cluster.sasl) {
    const { username, password } = cluster.sasl
    lines.push(
      `${alias}.security.protocol = SASL_PLAINTEXT`,
      `${alias}.sasl.mechanism = PLAIN`,
      `${alias}.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="${username}" password="${password}";`
    )
  }
  return lines
}

/**
 * A minimal valid mm2.properties for the test topology: SOURCE as A, TARGET as B, A->B enabled, and
 * replication factor 1 for replicated and internal topics (the test clusters have one broker each).
 */
export function mm2Properties ({ source, target, sourceAlias = 'A', targetAlias = 'B', extra = [] }: Mm2PropertiesOptions): string {
  const lines = [
    `clusters = ${sourceAlias}, ${targetAlias}`,
    ...clusterLines(sourceAlias, resolveCluster(source)),
    ...clusterLines(targetAlias, resolveCluster(target)),
    `${sourceAlias}->${targetAlias}.enabled = true`,
    ...INTERNAL_RF_KEYS.map(key => `${key} = 1`),
    // The shared test clusters go by different aliases in different tests, which hides cycles from MM2's
    // cycle detection (KAFKA-9914): replicating every heartbeats topic would bounce them between tests.
    // Tests about heartbeats turn this back on.
    'heartbeats.replication.enabled = false',
    ...extra
  ]
  return `${lines.join('\n')}\n`
}
