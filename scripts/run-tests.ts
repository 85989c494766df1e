/**
 * `npm test`: unit tests, then integration tests against real Kafka clusters. Unit files run in one `node --test`,
 * side by side (as many as the machine has cores), before any cluster starts. Integration files run in lanes side
 * by side (scripts/test-lanes.ts: two on 2 cores or more), each lane a child of this runner with clusters of its
 * own and its files one at a time. Every `node --test` run closes with the spec reporter's summary (`ℹ tests N`,
 * `ℹ pass N`, `ℹ fail N`); the last line adds them up (`run-tests: tests N, pass N, fail N (unit N, integration N)`).
 * Integration runs also print how long each file took (`run-tests: seconds each file took …`, from the reporter
 * scripts/file-seconds.ts, kept in each lane's state as file-seconds.json): paste it into MEASURED_SECONDS of
 * scripts/test-lanes.ts when the lanes drift apart.
 *
 *   node scripts/run-tests.ts [--unit-only | --integration-only] [--clusters=third,secure] [FILTER...]
 *
 * FILTER keeps the test files whose path contains it (e.g. `harness`, `test/unit/config`).
 * Environment:
 *   KMIRROR_TEST_CLUSTERS=third,secure  more clusters to start besides source and target ('all' for every one)
 *   KMIRROR_TEST_<NAME>_BOOTSTRAP       use an existing cluster instead (never started or stopped here)
 *   KMIRROR_KEEP_CLUSTERS=1             leave the clusters this run started running afterwards
 *   KMIRROR_TEST_TIMEOUT_MS             per-test timeout (default 180000)
 *   KMIRROR_TEST_RUN_TIMEOUT_MS         whole-run watchdog (default 4200000, 70 min: the goal is under 40, CI stops at 90)
 *   KMIRROR_TEST_LANES=N                integration lanes, 1-4 (default 2 on 2 cores or more; 1 with an external cluster)
 *
 * Processes: each `node --test` runs in a process group of its own, with every test file, `kmirror run` and MM2 JVM
 * the tests start; the watchdog, SIGINT and SIGTERM stop that whole group (SIGKILL after 10 s), and whatever
 * of it is left when the tests end is stopped too (brokers are not in it: kafka-local.sh starts them with setsid).
 *
 * Clusters: the run (each lane, in its own KMIRROR_STATE) starts what integration tests need, and afterwards
 * stops every topology cluster that runs now but did not before it began (so clusters a test started through
 * ensureClusters are stopped too),
 * leaving alone clusters that were already up and external ones.
 */
import { globSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import {
  CLUSTER_NAMES,
  REPO_ROOT,
  ensureClusters,
  getCluster,
  isClusterName,
  isClusterRunning,
  runKafkaLocal,
  stateDir,
  stopCluster,
  type ClusterName
} from '../test/helpers/clusters.ts'
import { spawnInOwnGroup, stopGroup } from '../test/helpers/process-group.ts'
import { describeFileSeconds } from './file-seconds.ts'
import { addCounts, laneCount, laneEnv, passThroughCounted, runLanes, splitIntoLanes, type LaneResult } from './test-lanes.ts'

/** What every integration test may assume is up. Later suites add theirs with --clusters or the env var. */
const DEFAULT_CLUSTERS: readonly ClusterName[] = ['source', 'target']
const UNIT_GLOB = 'test/unit/**/*.test.ts'
const INTEGRATION_GLOB = 'test/integration/**/*.test.ts'
/** Where, in a lane's state directory, the timing reporter (scripts/file-seconds.ts) writes each file's seconds. */
const SECONDS_FILE = 'file-seconds.json'
const SECONDS_REPORTER = join(REPO_ROOT, 'scripts', 'file-seconds.ts')

/**
 * The timing reporter's file of lane INDEX (0-based; the lane's state as laneEnv sets it), absolute: `node --test`
 * runs in REPO_ROOT, this runner wherever it was started, and a relative KMIRROR_STATE must mean one place to both.
 */
function secondsFileOf (index: number): string {
  return resolve(REPO_ROOT, laneEnv(index, process.env, stateDir(), 0).KMIRROR_STATE ?? stateDir(), SECONDS_FILE)
}

interface Options {
  unit: boolean
  integration: boolean
  clusters: ClusterName[]
  filters: string[]
}

function log (message: string): void {
  process.stdout.write(`run-tests: ${message}\n`)
}

function parseClusterList (list: string, from: string): ClusterName[] {
  const names = list.split(',').map(s => s.trim()).filter(Boolean)
  if (names.includes('all')) return [...CLUSTER_NAMES]
  for (const name of names) {
    if (!isClusterName(name)) throw new Error(`${from}: unknown cluster '${name}' (known: ${CLUSTER_NAMES.join(', ')}, all)`)
  }
  return names as ClusterName[]
}

function parseArgs (argv: readonly string[]): Options {
  const options: Options = { unit: true, integration: true, clusters: [...DEFAULT_CLUSTERS], filters: [] }
  options.clusters.push(...parseClusterList(process.env.KMIRROR_TEST_CLUSTERS ?? '', 'KMIRROR_TEST_CLUSTERS'))
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--unit-only') options.integration = false
    else if (arg === '--integration-only') options.unit = false
    else if (arg === '--clusters') options.clusters.push(...parseClusterList(argv[++i] ?? '', '--clusters'))
    else if (arg.startsWith('--clusters=')) options.clusters.push(...parseClusterList(arg.slice('--clusters='.length), '--clusters'))
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`usage: node scripts/run-tests.ts [--unit-only | --integration-only] [--clusters=a,b] [FILTER...]\n`)
      process.exit(0)
    } else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`)
    else options.filters.push(arg.replace(/^\.\//, ''))
  }
  if (!options.unit && !options.integration) throw new Error('--unit-only and --integration-only exclude each other')
  options.clusters = [...new Set(options.clusters)]
  return options
}

function findTests (pattern: string, filters: readonly string[]): string[] {
  return globSync(pattern, { cwd: REPO_ROOT })
    .filter(file => filters.length === 0 || filters.some(f => file.includes(f)))
    .sort()
}

/** How long the processes of an interrupted run get to stop after SIGTERM/SIGINT, before SIGKILL. */
const STOP_GRACE_MS = 10_000

/** When the whole run (both phases) must have ended: the watchdog stops whatever runs then. */
const RUN_DEADLINE = Date.now() + Number(process.env.KMIRROR_TEST_RUN_TIMEOUT_MS ?? 70 * 60 * 1000)

type PhaseResult = LaneResult

/**
 * One `node --test` run over FILES, CONCURRENCY files at a time. Its output is passed through as it comes;
 * the closing counts are picked out of it for the run's total line. With SECONDSFILE (files one at a time) a
 * second reporter writes there how long each file took, and the run ends by printing it.
 */
function runNodeTest (files: readonly string[], concurrency: number, secondsFile?: string): Promise<PhaseResult> {
  const timeout = process.env.KMIRROR_TEST_TIMEOUT_MS ?? '180000'
  if (secondsFile !== undefined) {
    // A file left by an earlier run must not pass for this one's; the reporter's stream creates no directory.
    rmSync(secondsFile, { force: true })
    mkdirSync(dirname(secondsFile), { recursive: true })
  }
  const timing = secondsFile === undefined ? [] : [`--test-reporter=${SECONDS_REPORTER}`, `--test-reporter-destination=${secondsFile}`]
  const args = ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout', ...timing, `--test-timeout=${timeout}`, `--test-concurrency=${concurrency}`, ...files]
  // Its own process group: the test files, the kmirror processes and MM2 JVMs they start all belong to it.
  const child = spawnInOwnGroup(process.execPath, args, { cwd: REPO_ROOT, stdio: ['inherit', 'pipe', 'inherit'], env: { ...process.env, KMIRROR_TEST_RUNNER: '1' } })
  const pgid = child.pid
  const counts = passThroughCounted(child.stdout)
  let stopping: Promise<boolean> | undefined
  const stop = (signal: NodeJS.Signals): void => {
    if (pgid !== undefined) stopping ??= stopGroup(pgid, STOP_GRACE_MS, signal)
  }
  const watchdog = setTimeout(() => {
    log(`the run took longer than its ${process.env.KMIRROR_TEST_RUN_TIMEOUT_MS ?? 70 * 60 * 1000} ms: stopping it and every process it started`)
    stop('SIGTERM')
  }, Math.max(0, RUN_DEADLINE - Date.now()))
  onInterrupt = stop
  return new Promise(resolve => {
    child.once('close', (code, signal) => {
      clearTimeout(watchdog)
      onInterrupt = undefined
      const result = code ?? (signal ? 1 : 0)
      if (secondsFile !== undefined) logFileSeconds(secondsFile)
      void stopLeftovers(pgid, stopping).then(() => resolve({ code: result, counts: counts() }))
    })
  })
}

/**
 * The per-file seconds the timing reporter wrote (one file per lane; all lanes together once they ended): those
 * it got to write (an interrupted lane may not), and which are missing.
 */
function logFileSeconds (...secondsFiles: string[]): void {
  const read: string[] = []
  for (const file of secondsFiles) {
    try {
      const json = readFileSync(file, 'utf8')
      JSON.parse(json)
      read.push(json)
    } catch (error) {
      log(`no seconds per file in ${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  if (read.length > 0) log(describeFileSeconds(...read))
}

/** Whatever of the run's process group outlived `node --test` (a process a test did not stop) is stopped too. */
async function stopLeftovers (pgid: number | undefined, stopping: Promise<boolean> | undefined): Promise<void> {
  if (pgid === undefined) return
  await stopping
  if (await stopGroup(pgid, STOP_GRACE_MS)) log(`stopped processes the tests left running (process group ${pgid})`)
}

/**
 * SIGINT/SIGTERM never kill this process outright: the clusters it started must still be stopped.
 * While tests run, the signal goes to them; before, it cancels the run; after, cleanup just goes on.
 */
let interrupted: NodeJS.Signals | undefined
let onInterrupt: ((signal: NodeJS.Signals) => void) | undefined
function handleSignals (): void {
  const handler = (signal: NodeJS.Signals): void => {
    interrupted ??= signal
    log(`${signal}: stopping the tests, then the clusters this run started`)
    onInterrupt?.(signal)
  }
  process.on('SIGINT', handler).on('SIGTERM', handler)
}

/** Jars, then the clusters (RUNNINGBEFORE: the topology clusters that ran before this run began). */
async function prepareClusters (names: readonly ClusterName[], runningBefore: ReadonlySet<ClusterName>): Promise<void> {
  const started = Date.now()
  await runKafkaLocal(['fetch'])
  await ensureClusters(names)
  const described = names.map(n => {
    const c = getCluster(n)
    return `${n} ${c.bootstrap}${c.external ? ' (external)' : runningBefore.has(n) ? ' (already running)' : ' (started)'}`
  })
  log(`clusters ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${described.join(', ')}`)
}

async function stopStartedClusters (runningBefore: ReadonlySet<ClusterName>): Promise<void> {
  const ours = CLUSTER_NAMES.filter(n => !getCluster(n).external && !runningBefore.has(n) && isClusterRunning(n))
  if (ours.length === 0) return
  if (process.env.KMIRROR_KEEP_CLUSTERS === '1') {
    const state = process.env.KMIRROR_STATE ? `KMIRROR_STATE=${process.env.KMIRROR_STATE} ` : ''
    log(`KMIRROR_KEEP_CLUSTERS=1: leaving ${ours.join(', ')} running (stop: ${state}bash scripts/kafka-local.sh down ${ours.join(' ')})`)
    return
  }
  const results = await Promise.allSettled(ours.map(n => stopCluster(n)))
  results.forEach((r, i) => {
    if (r.status === 'rejected') log(`could not stop ${ours[i]}: ${String(r.reason)}`)
  })
  log(`stopped ${ours.join(', ')}`)
}

/** Starts the clusters; resolves with the error that stopped them, if one did. */
async function startClusters (options: Options, runningBefore: ReadonlySet<ClusterName>): Promise<unknown> {
  try {
    await prepareClusters(options.clusters, runningBefore)
    return undefined
  } catch (error) {
    log(`clusters could not be started, so no integration test runs:\n${error instanceof Error ? error.message : String(error)}`)
    return error ?? new Error('clusters could not be started')
  }
}

/**
 * The integration files in LANES lanes side by side, each a child runner with clusters of its own
 * (scripts/test-lanes.ts); its code is the first failing lane's, its counts their sum.
 */
async function runIntegrationLanes (files: readonly string[], lanes: number, options: Options): Promise<PhaseResult> {
  const split = splitIntoLanes(files, lanes)
  // Each lane removes its own before its tests; a lane that never gets there must not show an earlier run's.
  split.forEach((_, i) => rmSync(secondsFileOf(i), { force: true }))
  log(`integration files in ${split.length} lanes side by side, each with clusters of its own: ${split.map((l, i) => `lane ${i + 1} ${l.length} file${l.length === 1 ? '' : 's'}`).join(', ')}`)
  const run = runLanes(process.argv[1]!, split, `--clusters=${options.clusters.join(',')}`, stateDir(), RUN_DEADLINE - Date.now())
  onInterrupt = run.signal
  const results = await run.done
  onInterrupt = undefined
  logFileSeconds(...split.map((_, i) => secondsFileOf(i)))
  return { code: results.find(r => r.code !== 0)?.code ?? 0, counts: addCounts(results.map(r => r.counts)) }
}

/** The run's total over its phases, in the spec reporter's words. */
function logTotal (phases: ReadonlyArray<[string, PhaseResult | undefined]>): void {
  const total = addCounts(phases.map(([, r]) => r?.counts))
  if (total === undefined) return
  const parts = phases.flatMap(([name, r]) => r?.counts === undefined ? [] : [`${name} ${r.counts.tests}`]).join(', ')
  log(`tests ${total.tests}, pass ${total.pass}, fail ${total.fail} (${parts})`)
}

async function main (): Promise<number> {
  const options = parseArgs(process.argv.slice(2))
  const unitFiles = options.unit ? findTests(UNIT_GLOB, options.filters) : []
  const integrationFiles = options.integration ? findTests(INTEGRATION_GLOB, options.filters) : []
  if (unitFiles.length + integrationFiles.length === 0) {
    log(options.filters.length > 0 ? `no test file matches ${options.filters.join(', ')}` : 'no test files')
    return options.filters.length > 0 ? 1 : 0
  }
  // Checked before the unit files run: a bad KMIRROR_TEST_LANES fails at once, not minutes later.
  const lanes = laneCount(process.env, availableParallelism())
  log(`${unitFiles.length} unit and ${integrationFiles.length} integration test files`)
  handleSignals()
  const started = Date.now()
  const runningBefore = new Set(CLUSTER_NAMES.filter(n => !getCluster(n).external && isClusterRunning(n)))
  try {
    // Unit files share nothing, so they run side by side: two at a time take 60 % of the time one at a time
    // takes on 2 cores. Before the clusters start: idle brokers slow them by a tenth, and starting them alongside
    // saves nothing (measured). Integration files share clusters: one at a time within a lane, lanes apart.
    const unit = unitFiles.length > 0 && !interrupted ? await runNodeTest(unitFiles, availableParallelism()) : undefined
    let clusterError: unknown
    let integration: PhaseResult | undefined
    if (integrationFiles.length > 0 && !interrupted && lanes > 1 && integrationFiles.length > 1) {
      integration = await runIntegrationLanes(integrationFiles, lanes, options)
    } else if (integrationFiles.length > 0 && !interrupted) {
      clusterError = await startClusters(options, runningBefore)
      integration = !clusterError && !interrupted ? await runNodeTest(integrationFiles, 1, secondsFileOf(0)) : undefined
    }
    logTotal([['unit', unit], ['integration', integration]])
    const code = unit?.code || integration?.code || 0
    const failed = code !== 0 || clusterError !== undefined || interrupted !== undefined
    log(`${failed ? 'FAILED' : 'passed'}${interrupted ? ` (${interrupted})` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return failed ? code || 1 : 0
  } finally {
    if (integrationFiles.length > 0) await stopStartedClusters(runningBefore)
  }
}

main().then(
  code => process.exit(code),
  error => {
    log(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
)
