/**
 * `npm run bench`: kmirror against the real Apache MirrorMaker 2 on the same two local clusters.
 *
 *   node bench/run.ts [--scenario NAME]... [--size full|tiny] [--out FILE] [--compare NAME,...]
 *                     [--without-mm2] [--source-bootstrap H:P --target-bootstrap H:P] [--keep-clusters]
 *
 * By default it wipes and starts its own clusters bench-a (127.0.0.1:39092) and bench-b (39192), shifted by
 * KMIRROR_TEST_PORT_OFFSET like the test clusters, runs
 * every scenario, appends the tables to bench/RESULTS.md and wipes the
 * clusters. With --source-bootstrap/--target-bootstrap it uses those clusters as they are (never started,
 * stopped or wiped): the CI smoke test runs on the test clusters this way. --compare names the scenarios in which
 * MM2 and the limit run beside kmirror (default: every one; the others run kmirror alone); --without-mm2 keeps the
 * limit rows of those scenarios but never runs MM2 (A/B runs of kmirror against the broker's own pace).
 */
import { appendFileSync, existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { brokerPid, REPO_ROOT, runKafkaLocal, shiftedPort, type TestCluster } from '../test/helpers/clusters.ts'
import { deleteTopics } from '../test/helpers/kafka.ts'
import { newWorkDir, type BenchContext } from './lib/measure.ts'
import { TOOLS } from './lib/replicators.ts'
import { WARM_TARGET, warmsTarget, warmTarget } from './lib/warm-up.ts'
import { kmirrorRevision, runHeader, scenarioTable, type ScenarioResult } from './lib/report.ts'
import { SCENARIOS, type Size } from './scenarios.ts'

const OWN_CLUSTERS = [{ name: 'bench-a', port: shiftedPort(39092) }, { name: 'bench-b', port: shiftedPort(39192) }] as const

interface Options {
  scenarios: string[]
  /** The scenarios in which MM2 (and the limit) run too. */
  compare: string[]
  /** MM2 never runs; the limit rows of the `compare` scenarios still do. */
  withoutMm2: boolean
  size: Size
  out: string
  sourceBootstrap?: string
  targetBootstrap?: string
  keepClusters: boolean
}

function parseOptions (argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string', multiple: true },
      compare: { type: 'string', multiple: true },
      size: { type: 'string', default: 'full' },
      out: { type: 'string', default: join(REPO_ROOT, 'bench', 'RESULTS.md') },
      'source-bootstrap': { type: 'string' },
      'target-bootstrap': { type: 'string' },
      'keep-clusters': { type: 'boolean', default: false },
      'without-mm2': { type: 'boolean', default: false }
    }
  })
  const known = SCENARIOS.map(s => s.name)
  const scenarios = (values.scenario ?? known).flatMap(s => s.split(',')).map(s => s.trim()).filter(Boolean)
  const compare = (values.compare ?? known).flatMap(s => s.split(',')).map(s => s.trim()).filter(Boolean)
  const unknown = [...scenarios, ...compare].filter(s => !known.includes(s))
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')} (known: ${known.join(', ')})`)
  if (values.size !== 'full' && values.size !== 'tiny') throw new Error(`--size must be full or tiny, not ${values.size}`)
  if (Boolean(values['source-bootstrap']) !== Boolean(values['target-bootstrap'])) throw new Error('give both --source-bootstrap and --target-bootstrap, or neither')
  return {
    scenarios, compare, withoutMm2: values['without-mm2'], size: values.size, out: values.out, keepClusters: values['keep-clusters'],
    sourceBootstrap: values['source-bootstrap'], targetBootstrap: values['target-bootstrap']
  }
}

const log = (line: string): void => { process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`) }

/** The clusters to use, and a function that releases them (wipes our own unless told to keep them). */
interface Created {
  source: string[]
  target: string[]
}

interface Clusters {
  source: TestCluster
  target: TestCluster
  release: (created: Created) => Promise<void>
  /** Own clusters only: the target wiped and started again (see BenchContext.freshTarget). */
  freshTarget?: () => Promise<void>
  brokerPid?: (cluster: 'source' | 'target') => number
}

async function openClusters (options: Options): Promise<Clusters> {
  // The test helpers take any cluster marked external and only read its bootstrap.
  const cluster = (name: 'source' | 'target', bootstrap: string): TestCluster => ({ name, bootstrap, external: true })
  if (options.sourceBootstrap && options.targetBootstrap) {
    const source = cluster('source', options.sourceBootstrap)
    const target = cluster('target', options.targetBootstrap)
    // Clusters the harness does not own keep nothing of the run but the replicators' internal topics.
    const release = async (created: Created): Promise<void> => {
      await deleteTopics(source, created.source)
      await deleteTopics(target, created.target)
    }
    return { source, target, release }
  }
  const names = OWN_CLUSTERS.map(c => c.name)
  log(`starting fresh clusters ${names.join(' and ')}`)
  await runKafkaLocal(['wipe', ...names])
  await Promise.all(OWN_CLUSTERS.map(c => runKafkaLocal(['up', c.name, String(c.port)])))
  return {
    source: cluster('source', `127.0.0.1:${OWN_CLUSTERS[0].port}`),
    target: cluster('target', `127.0.0.1:${OWN_CLUSTERS[1].port}`),
    freshTarget: async () => {
      const { name, port } = OWN_CLUSTERS[1]
      log(`wiping and starting ${name} again: a fresh target`)
      await runKafkaLocal(['wipe', name])
      await runKafkaLocal(['up', name, String(port)])
      // The tiny size is a smoke test of the scenarios: nothing there is worth warming a broker for.
      if (!warmsTarget(options.size)) return
      const { topics, perTopic } = WARM_TARGET
      const seconds = await warmTarget(cluster('target', `127.0.0.1:${port}`))
      log(`${name} warmed up (${topics} topics × ${perTopic} partitions created, written and read) in ${seconds.toFixed(1)} s`)
    },
    brokerPid: (side: 'source' | 'target') => brokerPid(OWN_CLUSTERS[side === 'source' ? 0 : 1].name),
    release: async () => {
      if (options.keepClusters) return
      log(`wiping ${names.join(' and ')}`)
      await runKafkaLocal(['wipe', ...names])
    }
  }
}

function commandLine (argv: readonly string[]): string {
  const args = argv.map(a => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ')
  return process.env.npm_lifecycle_event === 'bench' ? `npm run bench${args ? ` -- ${args}` : ''}` : `node bench/run.ts ${args}`.trim()
}

async function main (): Promise<void> {
  const argv = process.argv.slice(2)
  const options = parseOptions(argv)
  const started = new Date()
  const revision = kmirrorRevision()
  const clusters = await openClusters(options)
  const workDir = newWorkDir()
  const created: Created = { source: [], target: [] }
  const base = {
    source: clusters.source, target: clusters.target, workDir, log, freshTarget: clusters.freshTarget, brokerPid: clusters.brokerPid,
    created: (cluster: keyof Created, topics: readonly string[]) => created[cluster].push(...topics)
  }
  const results: ScenarioResult[] = []
  try {
    for (const name of options.scenarios) {
      log(`scenario ${name} (${options.size})`)
      const scenario = SCENARIOS.find(s => s.name === name)!
      const compared = options.compare.includes(name)
      const ctx: BenchContext = { ...base, tools: compared && !options.withoutMm2 ? TOOLS : ['kmirror'], limit: compared }
      const result = await scenario.run(ctx, options.size)
      results.push(result)
      process.stdout.write(`\n${scenarioTable(result)}\n`)
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true })
    await clusters.release(created)
  }
  const seconds = (Date.now() - started.getTime()) / 1000
  const text = `${runHeader(commandLine(argv), started, seconds, revision)}\n${results.map(scenarioTable).join('\n')}\n`
  if (!existsSync(options.out)) writeFileSync(options.out, '# kmirror vs MirrorMaker 2: results\n\nMethod and settings: [README.md](README.md). Newest run last.\n\n')
  appendFileSync(options.out, text)
  log(`done in ${seconds.toFixed(0)} s; results appended to ${options.out}`)
}

main().catch(error => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
