/**
 * Integration files in lanes that run side by side. Each lane is a `scripts/run-tests.ts --integration-only`
 * child with clusters of its own: its ports shifted by KMIRROR_TEST_PORT_OFFSET and its brokers' state, logs
 * and locks under a KMIRROR_STATE of its own. Lanes share no broker, group or internal topic, so a test that
 * kills, freezes or restarts a cluster, or that expects to be the only `kmirror-A-B` group member, sees only
 * its own lane. Within a lane, files run one at a time as before.
 *
 * Why: much of integration time is waiting (session timeouts, back-offs, brokers electing leaders); one lane
 * left the 2 cores idle 53 % of the time over its 32 minutes (vmstat every 10 s, CI run of 2026-12-04).
 */
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileKey } from './file-seconds.ts'

/** How far apart the lanes' ports are: every test cluster port lies in 19092-20300 (test/helpers/clusters.ts). */
export const LANE_PORT_STEP = 2000

/**
 * Seconds each integration file took here, the mean of two two-lane runs (2026-12-07, 2 cores; the lines `run-tests:
 * seconds each file took` of every run print them, from scripts/file-seconds.ts): the weights that balance the lanes.
 * A file's seconds vary by up to a fifth between runs, so lanes come out within about 100 s of each other. A file
 * not listed weighs DEFAULT_SECONDS; the lanes stay correct with any weights, only less even.
 */
const MEASURED_SECONDS: Readonly<Record<string, number>> = {
  'active-active-default': 190, 'target-partition-offline': 166, 'source-partition-offline': 156, 'coordinator-move': 140,
  'instance-failure': 138, 'bench-smoke': 116, 'failback-drill': 102, 'source-quota': 88, 'least-privilege-eos': 87,
  'broker-kill': 83, 'compat-floor': 82, 'exactly-once': 79, 'failover-drill': 76, 'crash-safety': 68, 'held-progress-read': 68,
  'offsets-set': 63, 'least-privilege': 60, 'credential-rotation': 58, 'compat-zk28': 56, 'mm2-handover-eos': 55,
  'acl-sync-safety': 46, 'source-transaction-hold-faults': 46, 'partition-faults': 45, 'security': 44, 'demo': 42,
  'lost-acks': 42, 'lagging-group': 40, 'active-active-identity': 39, 'scale-out': 38, 'startup-fault': 38,
  'offsets-in-transaction': 36, 'source-topic-recreated': 36, 'deletion-proof': 35, 'group-offset-sync': 35,
  'identity-mesh': 34, 'mm2-handover': 34, 'silent-broker': 34, 'source-transaction-hold': 34, 'broker-freeze': 33,
  'remote-deleted-instances': 33, 'offset-translation': 32, 'offsets-unwritable': 31, 'compat-v36': 30, 'compat-v39': 30,
  'fetch-sessions': 30, 'group-membership': 30, 'verify': 30, 'http-access': 27, 'acl-sync': 26, 'failover-safety': 24,
  'history-after-recopy': 22, 'sasl': 22, 'topic-discovery': 22, 'console': 21, 'new-topics': 21, 'status': 20,
  'bad-input': 18, 'binary': 18, 'foreign-groups': 18, 'eos-progress-behind-open-transaction': 16, 'plan': 16,
  'heartbeats-emit': 15, 'error-messages': 14, 'exact-copy': 14, 'target-quota': 14, 'config-providers': 12,
  'ownership-handover': 12, 'topic-configs': 12, 'topic-create-batches': 40, 'topology': 11, 'observability': 10, 'exactly-once-faults': 9,
  'exactly-once-fencing': 9, 'harness': 8, 'http': 6, 'transactions': 6, 'systemd-unit': 5
}
const DEFAULT_SECONDS = 30

/**
 * How many lanes: KMIRROR_TEST_LANES when set, else 2 on a machine with at least 2 cores, and 1 whenever a
 * cluster is external (KMIRROR_TEST_<NAME>_BOOTSTRAP): every lane would share it.
 */
export function laneCount (env: NodeJS.ProcessEnv, cores: number): number {
  const external = Object.keys(env).some(k => /^KMIRROR_TEST_[A-Z0-9]+_BOOTSTRAP$/.test(k) && env[k] !== '')
  if (external) return 1
  const asked = env.KMIRROR_TEST_LANES
  if (asked !== undefined && asked !== '') {
    const n = Number(asked)
    if (!Number.isInteger(n) || n < 1 || n > 4) throw new Error(`KMIRROR_TEST_LANES=${asked} must be a whole number from 1 to 4`)
    return n
  }
  return cores >= 2 ? 2 : 1
}

/** FILES over LANES lanes: the heaviest first, each onto the lightest lane so far; each lane in path order. */
export function splitIntoLanes (files: readonly string[], lanes: number): string[][] {
  const weight = (file: string): number => MEASURED_SECONDS[fileKey(file)] ?? DEFAULT_SECONDS
  const result = Array.from({ length: lanes }, () => ({ files: [] as string[], seconds: 0 }))
  for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = result.reduce((best, lane) => lane.seconds < best.seconds ? lane : best)
    lightest.files.push(file)
    lightest.seconds += weight(file)
  }
  return result.map(lane => lane.files.sort()).filter(lane => lane.length > 0)
}

/**
 * The environment of lane INDEX (0-based): lane 0 keeps the run's ports and state (so KMIRROR_KEEP_CLUSTERS
 * and clusters already running work as before); lane i shifts the ports by i × LANE_PORT_STEP and keeps its
 * state in `<state>/lane-<i+1>`. KMIRROR_TEST_LANES=1 keeps a lane from splitting again.
 */
export function laneEnv (index: number, env: NodeJS.ProcessEnv, stateDir: string, remainingMs: number): NodeJS.ProcessEnv {
  const lane: NodeJS.ProcessEnv = { ...env, KMIRROR_TEST_LANES: '1', KMIRROR_TEST_RUN_TIMEOUT_MS: String(Math.max(1, remainingMs)) }
  if (index === 0) return lane
  const offset = Number(env.KMIRROR_TEST_PORT_OFFSET ?? 0) + index * LANE_PORT_STEP
  return { ...lane, KMIRROR_TEST_PORT_OFFSET: String(offset), KMIRROR_STATE: join(stateDir, `lane-${index + 1}`) }
}

/** The spec reporter's closing counts of one `node --test` run (`ℹ tests N`, `ℹ pass N`, `ℹ fail N`). */
export interface Counts { tests: number, pass: number, fail: number }

/**
 * Picks the closing counts out of a test run's output, fed in chunks as they come; `counts()` gives the last
 * summary seen (a lane's output holds one), undefined when there was none (the run did not get that far).
 */
export function summaryCounter (): { feed: (chunk: string) => void, counts: () => Counts | undefined } {
  const seen: Partial<Counts> = {}
  let partial = ''
  const feed = (chunk: string): void => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      // The reporter may colour the line; the counts follow the ℹ mark either way.
      const match = /ℹ (tests|pass|fail) (\d+)/.exec(line)
      if (match) seen[match[1] as keyof Counts] = Number(match[2])
    }
  }
  const counts = (): Counts | undefined => seen.tests === undefined ? undefined : { tests: seen.tests, pass: seen.pass ?? 0, fail: seen.fail ?? 0 }
  return { feed, counts }
}

/** The sum of the counts given; undefined when none is. */
export function addCounts (counts: ReadonlyArray<Counts | undefined>): Counts | undefined {
  const known = counts.filter((c): c is Counts => c !== undefined)
  if (known.length === 0) return undefined
  return known.reduce((a, b) => ({ tests: a.tests + b.tests, pass: a.pass + b.pass, fail: a.fail + b.fail }))
}

/** Copies STREAM (a child's stdout) to this process's stdout as it comes, counting its summary on the way. */
export function passThroughCounted (stream: NodeJS.ReadableStream | null): () => Counts | undefined {
  const counter = summaryCounter()
  stream?.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk)
    counter.feed(chunk.toString('utf8'))
  })
  return counter.counts
}

/**
 * A lane's runner that ended without its own clean-up (killed, crashed) leaves the brokers it started running.
 * Every cluster under a lane's own state is that lane's (lane 1 shares the run's state, whose clusters the parent
 * stops itself), so all of them are stopped, unless KMIRROR_KEEP_CLUSTERS=1 asks to keep them.
 */
function stopLeftClusters (runner: string, index: number, env: NodeJS.ProcessEnv): void {
  const state = env.KMIRROR_STATE
  if (state === undefined) return
  if (env.KMIRROR_KEEP_CLUSTERS === '1') {
    process.stdout.write(`run-tests: KMIRROR_KEEP_CLUSTERS=1: leaving lane ${index + 1}'s clusters running (stop: KMIRROR_STATE=${state} bash scripts/kafka-local.sh down --all)\n`)
    return
  }
  const down = spawnSync('bash', [join(dirname(runner), 'kafka-local.sh'), 'down', '--all'], { env, encoding: 'utf8' })
  const said = `${down.stdout ?? ''}${down.stderr ?? ''}`.trim()
  process.stdout.write(`run-tests: lane ${index + 1} ended without stopping its clusters: stopped every cluster under ${state} (${down.status === 0 ? 'done' : `kafka-local.sh down --all failed: ${said || (down.error?.message ?? `code ${String(down.status)}`)}`})\n`)
}

export interface LaneResult { code: number, counts: Counts | undefined }

export interface LaneRun {
  /** Every lane's exit code and counts, in lane order. */
  done: Promise<LaneResult[]>
  /** Passes SIGNAL to every lane still running (each stops its tests, then its clusters). */
  signal: (signal: NodeJS.Signals) => void
}

/**
 * Runs each of LANES (lists of integration files) as a `RUNNER --integration-only` child. Lane 1 writes to
 * this process's output as it goes; the others to `<their state>/lane-test.log`, copied after lane 1, framed.
 */
export function runLanes (runner: string, lanes: readonly string[][], clusterArg: string, stateDir: string, remainingMs: number): LaneRun {
  // Every lane's environment and log file first: a lane that cannot have its log fails before any lane runs.
  const plans = lanes.map((files, index) => {
    const env = laneEnv(index, process.env, stateDir, remainingMs)
    const logFile = index === 0 ? undefined : join(env.KMIRROR_STATE!, 'lane-test.log')
    if (logFile) mkdirSync(dirname(logFile), { recursive: true })
    return { files, env, logFile, out: logFile ? openSync(logFile, 'w') : 'pipe' as const }
  })
  const children = plans.map(({ files, env, logFile, out }, index) => {
    const child = spawn(process.execPath, [runner, '--integration-only', clusterArg, ...files], { env, stdio: ['ignore', out, logFile ? out : 'inherit'] })
    if (typeof out === 'number') closeSync(out)
    const counter = summaryCounter()
    const streamed = passThroughCounted(child.stdout)
    const done = new Promise<LaneResult>(resolve => {
      // A lane that could not be started counts as failed (close follows error only when it started).
      child.once('error', err => {
        process.stdout.write(`run-tests: lane ${index + 1} could not be started: ${err.message}\n`)
        resolve({ code: 1, counts: undefined })
      })
      child.once('close', (code, signal) => {
        if (logFile) counter.feed(readFileSync(logFile, 'utf8') + '\n')
        const counts = logFile ? counter.counts() : streamed()
        if (counts === undefined) process.stdout.write(`run-tests: lane ${index + 1} printed no test summary (it ended with ${signal ?? `code ${code}`}): its tests are not in the total\n`)
        if (index > 0 && (signal !== null || counts === undefined)) stopLeftClusters(runner, index, env)
        resolve({ code: code ?? (signal ? 1 : 0), counts })
      })
    })
    return { child, done, logFile, files, env }
  })
  const done = (async () => {
    const results: LaneResult[] = []
    for (const [index, lane] of children.entries()) {
      results.push(await lane.done)
      if (lane.logFile) {
        const where = `ports +${Number(lane.env.KMIRROR_TEST_PORT_OFFSET) - Number(process.env.KMIRROR_TEST_PORT_OFFSET ?? 0)}, state ${lane.env.KMIRROR_STATE}`
        process.stdout.write(`run-tests: ----- lane ${index + 1} (${lane.files.length} file${lane.files.length === 1 ? '' : 's'}; ${where}): its output\n`)
        process.stdout.write(readFileSync(lane.logFile, 'utf8'))
        process.stdout.write(`run-tests: ----- end of lane ${index + 1}\n`)
      }
    }
    return results
  })()
  const signal = (name: NodeJS.Signals): void => {
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill(name)
  }
  return { done, signal }
}
