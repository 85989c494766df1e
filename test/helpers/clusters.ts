/**
 * The fixed test topology: four real Apache Kafka clusters on 127.0.0.1, run by scripts/kafka-local.sh.
 *
 *   source  plain                          127.0.0.1:19092
 *   target  plain                          127.0.0.1:19192
 *   third   plain                          127.0.0.1:19292
 *   secure  SASL/PLAIN + StandardAuthorizer 127.0.0.1:19392  (super user admin/admin-secret)
 *   auth    plain 127.0.0.1:19592, and a listener per client authentication (AUTH_LISTENERS)
 *   fourth  plain                          127.0.0.1:20192  (meshes of four clusters)
 *
 * and, for the compatibility tests, older Kafka releases (plain; see docs/compatibility.md):
 *
 *   v39   3.9.1 KRaft        127.0.0.1:19692
 *   v36   3.6.2 KRaft        127.0.0.1:19792
 *   zk28  2.8.2 ZooKeeper    127.0.0.1:19892  (its ZooKeeper on 19893)
 *   v20   2.0.1 ZooKeeper    127.0.0.1:19992  (below the 2.1 floor; ZooKeeper on 19993)
 *   v21   2.1.1 ZooKeeper    127.0.0.1:20092  (the floor; ZooKeeper on 20093)
 *
 * Invariants:
 * - A cluster named by KMIRROR_TEST_<NAME>_BOOTSTRAP is external: it is used as it is and never
 *   started, stopped, killed or restarted from here.
 * - Every other cluster belongs to kafka-local.sh; `up` is idempotent, and two processes bringing up the
 *   same cluster at once are serialised by a flock on <state>/locks/<name>.lock.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join, resolve } from 'node:path'

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..')
const KAFKA_LOCAL = join(REPO_ROOT, 'scripts', 'kafka-local.sh')

export type ClusterName = 'source' | 'target' | 'third' | 'fourth' | 'secure' | 'secure2' | 'auth' | 'v39' | 'v36' | 'zk28' | 'v20' | 'v21'

export interface SaslPlain {
  mechanism: 'PLAIN'
  username: string
  password: string
}

export interface TestCluster {
  /** A cluster of TOPOLOGY, or the multi-node `trio`. */
  name: ClusterName | 'trio'
  /** host:port, ready for `bootstrap.servers` or `bootstrapBrokers: [bootstrap]`. */
  bootstrap: string
  sasl?: SaslPlain
  /** True when the cluster came from KMIRROR_TEST_<NAME>_BOOTSTRAP: the harness never starts or stops it. */
  external: boolean
  /** The Kafka release it runs; absent for clusters made by hand (scripts, benchmarks): 4.1.1. */
  version?: string
}

/** A cluster by name or the cluster itself: every helper taking a cluster accepts both. */
export type ClusterRef = ClusterName | TestCluster

interface ClusterSpec {
  port: number
  mode: 'plain' | 'sasl' | 'auth'
  env: string
  /** An older Kafka release for the compatibility tests; kafka-local.sh's default (4.1.1) when absent. */
  version?: string
}

export const DEFAULT_KAFKA_VERSION = '4.1.1'

/**
 * KMIRROR_TEST_PORT_OFFSET shifts every port, so that two checkouts (each with its own KMIRROR_STATE) can run
 * their clusters side by side on one machine.
 */
const PORT_OFFSET = Number(process.env.KMIRROR_TEST_PORT_OFFSET ?? 0)
if (!Number.isInteger(PORT_OFFSET) || PORT_OFFSET < 0 || PORT_OFFSET > 40_000) {
  throw new Error(`KMIRROR_TEST_PORT_OFFSET=${process.env.KMIRROR_TEST_PORT_OFFSET} must be a whole number from 0 to 40000`)
}

/** BASE shifted by KMIRROR_TEST_PORT_OFFSET: a port a test opens itself (e.g. MM2's internal REST) next to its clusters. */
export function shiftedPort (base: number): number {
  return base + PORT_OFFSET
}

export const TOPOLOGY: Readonly<Record<ClusterName, ClusterSpec>> = Object.freeze({
  source: { port: 19092 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_SOURCE_BOOTSTRAP' },
  target: { port: 19192 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_TARGET_BOOTSTRAP' },
  third: { port: 19292 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_THIRD_BOOTSTRAP' },
  secure: { port: 19392 + PORT_OFFSET, mode: 'sasl', env: 'KMIRROR_TEST_SECURE_BOOTSTRAP' },
  // A second authorizer cluster: ACL sync needs one on both sides.
  secure2: { port: 19492 + PORT_OFFSET, mode: 'sasl', env: 'KMIRROR_TEST_SECURE2_BOOTSTRAP' },
  // Plain on its port (for the helpers), and the listeners of AUTH_LISTENERS for kmirror.
  auth: { port: 19592 + PORT_OFFSET, mode: 'auth', env: 'KMIRROR_TEST_AUTH_BOOTSTRAP' },
  v39: { port: 19692 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_V39_BOOTSTRAP', version: '3.9.1' },
  v36: { port: 19792 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_V36_BOOTSTRAP', version: '3.6.2' },
  zk28: { port: 19892 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_ZK28_BOOTSTRAP', version: '2.8.2' },
  v20: { port: 19992 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_V20_BOOTSTRAP', version: '2.0.1' },
  v21: { port: 20092 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_V21_BOOTSTRAP', version: '2.1.1' },
  // A fourth plain cluster, for meshes of four clusters.
  fourth: { port: 20192 + PORT_OFFSET, mode: 'plain', env: 'KMIRROR_TEST_FOURTH_BOOTSTRAP' }
})

/**
 * The listeners of the `auth` cluster (kafka-local.sh auth_listeners), as `127.0.0.1:port`, and its test-only
 * credentials. The certificates, stores and JWT signing key are in `authCertsDir()`.
 */
export const AUTH_LISTENERS = Object.freeze({
  /** SASL_PLAINTEXT: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. */
  saslPlaintext: `127.0.0.1:${TOPOLOGY.auth.port + 2}`,
  /** SASL_SSL: the same mechanisms. */
  saslSsl: `127.0.0.1:${TOPOLOGY.auth.port + 3}`,
  /** SSL with ssl.client.auth=required. */
  mtls: `127.0.0.1:${TOPOLOGY.auth.port + 4}`,
  /** SASL_PLAINTEXT OAUTHBEARER: RS256 JWTs checked against the JWKS of jwt-signing-key.pem (kid kmirror-test). */
  oauth: `127.0.0.1:${TOPOLOGY.auth.port + 5}`,
  /** SASL_PLAINTEXT OAUTHBEARER with Java's unsecured validator. */
  oauthUnsecured: `127.0.0.1:${TOPOLOGY.auth.port + 6}`,
  /**
   * PLAINTEXT on `port`, advertised as `advertisedPort`, where a test's proxy listens (answer-cutting-proxy.ts):
   * clients bootstrapping at `127.0.0.1:advertisedPort` go through the proxy for every request.
   */
  proxied: { port: TOPOLOGY.auth.port + 7, advertisedPort: TOPOLOGY.auth.port + 8 }
})

export const AUTH_SECRETS = Object.freeze({
  user: 'alice',
  plain: 'alice-plain-secret',
  scram256: 'alice-scram256-secret',
  scram512: 'alice-scram512-secret',
  clientStore: 'client-store-secret',
  clientKey: 'client-key-secret',
  trustStore: 'trust-secret'
})

export function authCertsDir (): string {
  return join(stateDir(), 'kafka', 'auth', 'certs')
}

export const CLUSTER_NAMES = Object.keys(TOPOLOGY) as ClusterName[]

/** The SASL/PLAIN super user of the `secure` cluster (kafka-local.sh's SASL_ADMIN_USER/PASS). */
export const SECURE_ADMIN: SaslPlain = Object.freeze({
  mechanism: 'PLAIN',
  username: process.env.KMIRROR_TEST_SECURE_USERNAME ?? process.env.SASL_ADMIN_USER ?? 'admin',
  password: process.env.KMIRROR_TEST_SECURE_PASSWORD ?? process.env.SASL_ADMIN_PASS ?? 'admin-secret'
})

export function isClusterName (name: string): name is ClusterName {
  return Object.hasOwn(TOPOLOGY, name)
}

export function getCluster (name: ClusterName): TestCluster {
  const spec = TOPOLOGY[name]
  if (!spec) throw new Error(`unknown test cluster '${name}' (known: ${CLUSTER_NAMES.join(', ')})`)
  const externalBootstrap = process.env[spec.env]?.trim()
  const cluster: TestCluster = {
    name,
    bootstrap: externalBootstrap || `127.0.0.1:${spec.port}`,
    external: Boolean(externalBootstrap),
    version: spec.version ?? DEFAULT_KAFKA_VERSION
  }
  if (spec.mode === 'sasl') cluster.sasl = { ...SECURE_ADMIN }
  return cluster
}

export function resolveCluster (ref: ClusterRef): TestCluster {
  return typeof ref === 'string' ? getCluster(ref) : ref
}

/** Where kafka-local.sh keeps the clusters' state, logs and locks (KMIRROR_STATE, default `<repo>/.state`). */
export function stateDir (): string {
  return process.env.KMIRROR_STATE ?? join(REPO_ROOT, '.state')
}

/** Runs `bash scripts/kafka-local.sh ARGS`, under a flock on LOCK when given; resolves with stdout. */
export function runKafkaLocal (args: string[], lock?: string): Promise<string> {
  let file = 'bash'
  let argv = [KAFKA_LOCAL, ...args]
  if (lock && hasFlock()) {
    const locks = join(stateDir(), 'locks')
    mkdirSync(locks, { recursive: true })
    // -o: the broker JVM that `up` leaves running must not inherit (and so hold) the lock.
    argv = ['-o', '-w', '600', join(locks, `${lock}.lock`), file, ...argv]
    file = 'flock'
  }
  return new Promise((resolvePromise, reject) => {
    execFile(file, argv, { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`kafka-local.sh ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`.trim(), { cause: error }))
        return
      }
      resolvePromise(stdout)
    })
  })
}

let flockAvailable: boolean | undefined
function hasFlock (): boolean {
  flockAvailable ??= ['/usr/bin/flock', '/bin/flock', '/usr/local/bin/flock'].some(p => existsSync(p))
  return flockAvailable
}

/** True when kafka-local.sh's pid file for NAME names its live broker (what `kafka-local.sh status` reports). */
export function isClusterRunning (name: ClusterName): boolean {
  return runningBrokerPid(name) !== undefined
}

/**
 * The pid in kafka-local.sh's pid file for NAME while that process runs and is NAME's broker: pids are reused (a
 * test run spawns thousands of processes), so a pid file left by a broker that died on its own may name an
 * unrelated process, which must be neither taken for the broker nor signalled. As kafka-local.sh's `pid_is_ours`,
 * the process's command line must name the pid file's directory (its server.properties).
 */
function runningBrokerPid (name: string): number | undefined {
  const dir = join(stateDir(), 'kafka', name)
  let pid: number
  try {
    pid = Number(readFileSync(join(dir, 'pid'), 'utf8').trim())
  } catch {
    return undefined
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined
  }
  let commandLine: string
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return pid // no /proc (not Linux): the live pid is all there is to go by
  }
  return commandLine.includes(`${dir}/`) ? pid : undefined
}

function isPortOpen (port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise(resolvePromise => {
    const socket = connect({ host: '127.0.0.1', port })
    const done = (open: boolean): void => {
      socket.destroy()
      resolvePromise(open)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

function refuseExternal (name: ClusterName, action: string): void {
  if (getCluster(name).external) {
    throw new Error(`refusing to ${action} cluster '${name}': it is external (${TOPOLOGY[name].env} is set)`)
  }
}

/** Starts NAME with kafka-local.sh if it is not running; resolves with true when this call started it. */
export async function startCluster (name: ClusterName): Promise<boolean> {
  refuseExternal(name, 'start')
  const { port, mode, env, version } = TOPOLOGY[name]
  if (!isClusterRunning(name) && (await isPortOpen(port))) {
    throw new Error(
      `port ${port} for test cluster '${name}' is taken by another process (not kafka-local cluster '${name}'). ` +
        `Stop it, or use it as is with ${env}=127.0.0.1:${port}`
    )
  }
  const out = await runKafkaLocal(['up', name, String(port), mode, ...(version ? [version] : [])], name)
  return !/already running/.test(out)
}

/**
 * Makes sure every named cluster is up (in parallel) and returns them in the same order.
 * External clusters are returned untouched. Idempotent and cheap when they already run.
 */
export async function ensureClusters (names: readonly ClusterName[]): Promise<TestCluster[]> {
  const local = [...new Set(names)].filter(n => !getCluster(n).external)
  const results = await Promise.allSettled(local.map(n => startCluster(n)))
  const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`${local[i]}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`] : []))
  if (failures.length > 0) throw new Error(`could not start test clusters:\n${failures.join('\n')}`)
  return names.map(getCluster)
}

/** Graceful stop (SIGTERM, then SIGKILL after 15 s). Refuses external clusters. */
export async function stopCluster (name: ClusterName): Promise<void> {
  refuseExternal(name, 'stop')
  await runKafkaLocal(['down', name], name)
}

/** SIGKILL at once, as in a machine crash; data stays on disk. Refuses external clusters. */
export async function killCluster (name: ClusterName): Promise<void> {
  refuseExternal(name, 'kill')
  await runKafkaLocal(['kill', name], name)
}

/** Stops NAME gracefully if it runs (a no-op after killCluster), then starts it on the same data. */
export async function restartCluster (name: ClusterName): Promise<void> {
  refuseExternal(name, 'restart')
  await stopCluster(name)
  await startCluster(name)
}

/** The pid of NAME's running broker JVM (kafka-local.sh's pid file; NAME may be one node of the trio, `trio-2`). */
export function brokerPid (name: string): number {
  const pid = runningBrokerPid(name)
  if (pid === undefined) throw new Error(`cluster '${name}' has no running broker (no pid file, or its pid is not the broker's)`)
  return pid
}

/**
 * Freezes NAME's broker with SIGSTOP: its connections stay open and nothing answers (a wedged broker, a long GC
 * pause). Registers the thaw with `t.after`, so a failed test never leaves it frozen. Refuses external clusters.
 */
export function freezeCluster (name: ClusterName, t?: { after: (fn: () => void) => void }): void {
  refuseExternal(name, 'freeze')
  const pid = brokerPid(name)
  t?.after(() => { try { process.kill(pid, 'SIGCONT') } catch { /* already gone */ } })
  process.kill(pid, 'SIGSTOP')
}

/** Thaws a broker frozen by freezeCluster (SIGCONT). */
export function thawCluster (name: ClusterName): void {
  refuseExternal(name, 'thaw')
  process.kill(brokerPid(name), 'SIGCONT')
}

/**
 * The multi-node cluster (kafka-local.sh up-multi): three KRaft nodes, each broker and controller voter, on
 * TRIO.port + 2(i-1); internal topics replicated 3 times, so the group and transaction coordinators move when the
 * broker holding them dies. Started on demand by the tests that use it (about 40 s, three 256 MB JVMs).
 */
export const TRIO = Object.freeze({ name: 'trio' as const, port: 20292 + PORT_OFFSET, nodes: 3 })

/** 127.0.0.1:port of node ID (1-based) of the trio. */
export function trioNode (id: number): string {
  return `127.0.0.1:${TRIO.port + 2 * (id - 1)}`
}

/** Starts the trio's nodes that are not running (all at first, or one killed by killTrioNode) and waits for them. */
export async function ensureTrio (): Promise<TestCluster> {
  await runKafkaLocal(['up-multi', TRIO.name, String(TRIO.port), String(TRIO.nodes)], TRIO.name)
  const all = Array.from({ length: TRIO.nodes }, (_, i) => trioNode(i + 1))
  return { name: TRIO.name, bootstrap: all.join(','), external: false }
}

/** True when every node of the trio runs. */
export function isTrioRunning (): boolean {
  return Array.from({ length: TRIO.nodes }, (_, i) => `${TRIO.name}-${i + 1}`).every(n => isNodeRunning(n))
}

function isNodeRunning (name: string): boolean {
  return runningBrokerPid(name) !== undefined
}

/**
 * The trio for one test file, started if needed. `release` stops it again (three JVMs are too many to leave idle
 * on a small machine) unless it ran before or KMIRROR_KEEP_CLUSTERS=1: register it with `t.after` AFTER the
 * cleanups that still need the trio, since node:test runs after-hooks in the order they were added.
 */
export async function useTrio (): Promise<{ trio: TestCluster, release: () => Promise<void> }> {
  const running = isTrioRunning()
  const release = async (): Promise<void> => { if (!running && process.env.KMIRROR_KEEP_CLUSTERS !== '1') await stopTrio() }
  try {
    return { trio: await ensureTrio(), release }
  } catch (err) {
    await release()
    throw err
  }
}

/** SIGKILL node ID of the trio at once (its data stays; ensureTrio brings it back). */
export async function killTrioNode (id: number): Promise<void> {
  await runKafkaLocal(['kill', `${TRIO.name}-${id}`], TRIO.name)
}

/**
 * Freezes node ID of the trio with SIGSTOP (connections accepted, nothing answered) until thawTrioNode or the
 * test's end (`t.after`): its controller fences it within broker.session.timeout.ms and moves its leaders.
 */
export function freezeTrioNode (id: number, t: { after: (fn: () => void) => void }): void {
  const pid = brokerPid(`${TRIO.name}-${id}`)
  t.after(() => { try { process.kill(pid, 'SIGCONT') } catch { /* already gone */ } })
  process.kill(pid, 'SIGSTOP')
}

export function thawTrioNode (id: number): void {
  process.kill(brokerPid(`${TRIO.name}-${id}`), 'SIGCONT')
}

/** Stops every node of the trio (SIGTERM). */
export async function stopTrio (): Promise<void> {
  await runKafkaLocal(['down', ...Array.from({ length: TRIO.nodes }, (_, i) => `${TRIO.name}-${i + 1}`)], TRIO.name)
}
