/**
 * `kmirror run`: validate, start every selected flow, report progress, stop cleanly on SIGTERM/SIGINT, during
 * start-up too (logged, what started is stopped, exit 0 as for any requested stop).
 */
import { selectHeartbeatFlows } from '../config/flows.ts'
import { loadInput, loadSelectedFlows } from './config-input.ts'
import { describeUnexpectedError, setUnexpectedErrorExitCode } from './unexpected-errors.ts'
import { ExitCodes, isInternalError } from '../errors.ts'
import type { HttpAccess, HttpAccessFlags } from '../http/http-access.ts'
import type { Logger } from '../logger.ts'
import { noMetrics } from '../metrics/metrics.ts'
import { partitionLag } from '../replication/flow-replicator.ts'
import type { FlowStatus } from '../runtime/flow.ts'
import { describeStall } from '../runtime/health.ts'
import { MirrorMaker, StoppedDuringStart } from '../runtime/mirror-maker.ts'

export interface RunOptions {
  readonly clusters: string[] | undefined
  readonly progressIntervalSeconds: number
  readonly http: { readonly host: string, readonly port: number } | undefined
  /** `--http-tls-cert`, `--http-tls-key`, `--http-auth-file` (need `--http-port`). */
  readonly httpAccess?: HttpAccessFlags
}

/** Stop must complete well inside the 10 s that service managers usually grant after SIGTERM. */
export const STOP_DEADLINE_MS = 9000

export async function runCommand (file: string, options: RunOptions, log: Logger): Promise<number> {
  const input = loadInput(() => {
    const { config, flows } = loadSelectedFlows(file, options.clusters)
    return { config, flows, heartbeatPairs: selectHeartbeatFlows(config, options.clusters) }
  })
  if (!input.ok) return input.exitCode
  const { config, flows, heartbeatPairs } = input.value
  for (const w of config.warnings) log.warn({ key: w.key }, w.message)
  if (options.http !== undefined && !(Number.isInteger(options.http.port) && options.http.port >= 0 && options.http.port < 65536)) {
    process.stderr.write(`kmirror: --http-port ${options.http.port} is not a port number: use 1-65535 (0 picks a free port)\n`)
    return ExitCodes.BAD_INPUT
  }
  const access = await loadHttpAccessFlags(options)
  if (access === null) return ExitCodes.BAD_INPUT
  // Metrics are only collected when an endpoint serves them: without --http-port neither prom-client nor the
  // HTTP server is loaded (start-up time).
  const prometheus = options.http === undefined ? undefined : new (await import('../metrics/registry.ts')).PrometheusMetrics()
  const mirror = new MirrorMaker(flows, log, prometheus ?? noMetrics, heartbeatPairs)
  const signalled = onStopSignal()
  watchHealth(mirror, log)
  let failure: unknown
  try {
    if (options.http !== undefined && prometheus !== undefined) {
      const [{ startHttpServer }, { TopologyView }] = await Promise.all([import('../http/server.ts'), import('../runtime/topology-view.ts')])
      const topology = new TopologyView(config, flows)
      const partitionMetrics = new Set(flows.filter(f => f.partitionMetrics).map(f => f.name))
      const server = await startHttpServer({
        ...options.http, access, metrics: prometheus, log, partitionMetrics: flow => partitionMetrics.has(flow), source: { status: () => mirror.status(), failure: () => failure, health: () => mirror.health(), topology: async () => await topology.document(), brokers: () => mirror.brokers() }
      })
      const address = server.address()
      log.info({ host: options.http.host, port: typeof address === 'object' && address !== null ? address.port : options.http.port, tls: access?.tls !== undefined, basicAuth: access?.authenticator !== undefined },
        'HTTP endpoint: / (console), /metrics, /healthz, /livez, /readyz, /status, /topology')
    }
    const signal = await startUnlessSignalled(mirror, signalled, log)
    if (signal !== undefined) return await stopDuringStart(mirror, signal, log)
    setUnexpectedErrorExitCode(ExitCodes.RUNTIME_FAILURE)
    // Only meaningful once started: before that, `done` is already resolved.
    mirror.done.catch((err: unknown) => { failure = err })
  } catch (err) {
    log.error({ err }, 'start failed')
    return reportStartFailure(err)
  }
  return await superviseUntilStopped(mirror, signalled, options, log)
}

/**
 * How `kmirror run` ends when it could not start: exit 3 (docs/errors.md), a bug included, which is reported as in
 * every command (`kmirror: unexpected error, please report it (KMIRROR_ERR_INTERNAL): ` and its stack).
 */
export function reportStartFailure (err: unknown): number {
  process.stderr.write(isInternalError(err) ? `${describeUnexpectedError(err)}\n` : `kmirror: ${err instanceof Error ? err.message : String(err)}\n`)
  return ExitCodes.START_FAILED
}

/**
 * The HTTP endpoint's TLS and basic authentication files, read and checked before anything is contacted:
 * undefined without those flags, null (the message printed) when one is wrong.
 */
async function loadHttpAccessFlags (options: RunOptions): Promise<HttpAccess | undefined | null> {
  const flags = options.httpAccess ?? {}
  const given = Object.entries({ '--http-tls-cert': flags.tlsCert, '--http-tls-key': flags.tlsKey, '--http-auth-file': flags.authFile }).filter(([, v]) => v !== undefined).map(([k]) => k)
  if (given.length === 0) return undefined
  if (options.http === undefined) {
    process.stderr.write(`kmirror: ${given.join(' and ')} ${given.length === 1 ? 'needs' : 'need'} --http-port: without it there is no HTTP endpoint to protect\n`)
    return null
  }
  const loaded = (await import('../http/http-access.ts')).loadHttpAccess(flags)
  if (loaded.ok) return loaded.value
  process.stderr.write(`kmirror: ${loaded.message}\n`)
  return null
}

/** The first SIGTERM or SIGINT; handled from before start-up on (Node's default would exit 143 silently). */
function onStopSignal (): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>(resolve => {
    process.once('SIGTERM', () => resolve('SIGTERM'))
    process.once('SIGINT', () => resolve('SIGINT'))
  })
}

/** Starts the flows; resolves with the signal if one came first (the start then goes on until stopped). */
async function startUnlessSignalled (mirror: MirrorMaker, signalled: Promise<NodeJS.Signals>, log: Logger): Promise<NodeJS.Signals | undefined> {
  const starting = mirror.start()
  const first = await Promise.race([starting.then(() => undefined), signalled])
  if (first === undefined) return undefined
  log.info({ signal: first }, 'stopping during start-up: no further start attempt, closing the clients opened so far')
  starting.catch((err: unknown) => { if (!(err instanceof StoppedDuringStart)) log.debug({ err }, 'start ended by the stop') })
  return first
}

async function stopDuringStart (mirror: MirrorMaker, signal: NodeJS.Signals, log: Logger): Promise<number> {
  const stopped = await stopWithinDeadline(mirror, log, ExitCodes.OK, 'stop during start-up took too long; exiting')
  if (!stopped.ok) log.warn({ err: stopped.err }, 'error while stopping during start-up')
  log.info({ signal }, 'stopped before start-up completed')
  exitSoon(ExitCodes.OK, log)
  return ExitCodes.OK
}

async function superviseUntilStopped (mirror: MirrorMaker, signalled: Promise<NodeJS.Signals>, options: RunOptions, log: Logger): Promise<number> {
  const progress = options.progressIntervalSeconds > 0 ? startProgressReports(mirror, options.progressIntervalSeconds, log) : null
  const outcome = await Promise.race([
    signalled.then(signal => ({ signal, err: undefined })),
    mirror.done.then(() => ({ signal: undefined, err: undefined }), (err: unknown) => ({ signal: undefined, err }))
  ])
  if (progress !== null) clearInterval(progress)
  if (outcome.err !== undefined) log.error({ err: outcome.err }, 'replication stopped by an error it cannot recover from')
  else log.info({ signal: outcome.signal }, 'stopping: finishing in-flight writes and storing progress')
  const stopped = await stopWithinDeadline(mirror, log, ExitCodes.RUNTIME_FAILURE,
    'clean stop took too long; exiting without the last progress (records after the last stored position will be copied again)')
  if (!stopped.ok) {
    if (outcome.err === undefined) log.error({ err: stopped.err }, 'error while stopping')
    return ExitCodes.RUNTIME_FAILURE
  }
  logProgress(mirror.status(), log, 'stopped')
  const code = outcome.err === undefined ? ExitCodes.OK : ExitCodes.RUNTIME_FAILURE
  exitSoon(code, log)
  return code
}

/** Stops every flow; past STOP_DEADLINE_MS the process exits with `code`, logging `tooLong`. */
async function stopWithinDeadline (mirror: MirrorMaker, log: Logger, code: number, tooLong: string): Promise<{ ok: true } | { ok: false, err: unknown }> {
  const deadline = setTimeout(() => {
    log.error({ deadlineMs: STOP_DEADLINE_MS }, tooLong)
    process.exit(code)
  }, STOP_DEADLINE_MS)
  deadline.unref()
  try {
    // The hand-overs, leaves and drains fit in the deadline: a member that leaves no group makes the others wait a session.
    await mirror.stop(Date.now() + STOP_DEADLINE_MS)
    return { ok: true }
  } catch (err) {
    return { ok: false, err }
  } finally {
    clearTimeout(deadline)
  }
}

/**
 * Once everything is stopped and progress stored, the process must end even if a handle is left open (a request
 * to a broker that does not answer, a reconnection the client library scheduled while a broker refused the
 * login): a service manager waits for the exit. The timer is unref'd, so a clean event loop exits at once.
 */
function exitSoon (code: number, log: Logger): void {
  setTimeout(() => {
    log.debug({ resources: process.getActiveResourcesInfo() }, 'exiting with handles still open after the stop')
    process.exit(code)
  }, 1000).unref()
}

/**
 * Logs when a flow turns stalled (no round for health.stall.threshold.ms: /healthz 503) and when it recovers, so
 * that an operator without the HTTP endpoint sees it too. The warnings before it name the broker and the cause.
 */
function watchHealth (mirror: MirrorMaker, log: Logger): void {
  let stalled = new Set<string>()
  const timer = setInterval(() => {
    const report = mirror.health()
    const now = new Set(report.stalled.map(s => s.flow))
    for (const s of report.stalled) {
      if (stalled.has(s.flow)) continue
      if (s.lease !== undefined) log.warn({ flow: s.flow, sinceMs: s.sinceMs, thresholdMs: s.thresholdMs, group: s.lease.group, leaseInvalidSince: s.lease.invalidSince }, `flow stalled: ${describeStall(s)}; /healthz answers 503 until it joins again`)
      else log.warn({ flow: s.flow, sinceMs: s.sinceMs, thresholdMs: s.thresholdMs, started: s.started }, 'flow stalled: no fetch-and-write round completed within health.stall.threshold.ms; /healthz answers 503 until one does')
    }
    for (const flow of stalled) if (!now.has(flow)) log.info({ flow }, 'flow no longer stalled: rounds complete again')
    stalled = now
  }, 1000)
  timer.unref()
}

function startProgressReports (mirror: MirrorMaker, seconds: number, log: Logger): NodeJS.Timeout {
  const timer = setInterval(() => logProgress(mirror.status(), log, 'progress'), seconds * 1000)
  timer.unref()
  return timer
}

function logProgress (flows: readonly FlowStatus[], log: Logger, message: string): void {
  for (const flow of flows) {
    let records = 0
    let bytes = 0
    let lag = 0
    let unknown = 0
    let failing = 0
    let lost = 0
    let seconds: number | null = 0
    for (const p of flow.partitions) {
      seconds = seconds === null || p.lagSeconds === null ? null : Math.max(seconds, p.lagSeconds)
      records += p.copiedRecords
      bytes += p.copiedBytes
      lost += p.lostToRetention
      if (p.failure !== null) failing++
      const partitionLagRecords = partitionLag(p)
      if (partitionLagRecords === null) unknown++
      else lag += partitionLagRecords
    }
    log.info({ flow: flow.name, partitions: flow.partitions.length, copiedRecords: records, copiedBytes: bytes, lagRecords: unknown > 0 ? null : lag, lagSeconds: seconds, lagUnknownPartitions: unknown, failingPartitions: failing, lostToRetention: lost }, message)
  }
}
