#!/usr/bin/env node
/**
 * The `kmirror` command. The only place that calls process.exit or handles signals.
 * Exit codes (src/errors.ts ExitCodes): 0 ok, 2 bad input (nothing written), 3 start failed, 4 runtime failure.
 */
import { readFileSync } from 'node:fs'
import { Command, CommanderError } from 'commander'
import { ConfigError, ExitCodes, isKmirrorError } from '../errors.ts'
import { createLogger } from '../logger.ts'
import { translateCommand } from './offsets-command.ts'
import { planCommand } from './plan-command.ts'
import { runCommand } from './run-command.ts'
import { topologyCommand } from './topology-command.ts'
import { validateCommand } from './validate-command.ts'

/** src/cli/ and dist/cli/ are both two levels below package.json. */
function packageVersion (): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

function buildProgram (): Command {
  const program = new Command()
    .name('kmirror')
    .version(packageVersion())
    .description('Cross-cluster replication for Apache Kafka, configured with MirrorMaker 2\'s mm2.properties')
    .exitOverride()
    .showHelpAfterError()
  program.command('run')
    .description('run every enabled flow of the configuration (MirrorMaker 2 dedicated mode)')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias...>', 'only run flows whose target is one of these clusters')
    .option('--progress-interval <seconds>', 'seconds between progress lines on stderr (0 = none)', '30')
    .option('--http-port <port>', 'serve /metrics (Prometheus), /healthz and /status on this port')
    .option('--http-host <host>', 'address the HTTP endpoint listens on', '0.0.0.0')
    .action(async (file: string, opts: { clusters?: string[], progressInterval: string, httpPort?: string, httpHost: string }) => {
      process.exitCode = await runCommand(file, {
        clusters: opts.clusters,
        progressIntervalSeconds: Number(opts.progressInterval),
        http: opts.httpPort === undefined ? undefined : { host: opts.httpHost, port: Number(opts.httpPort) }
      }, createLogger())
    })
  program.command('plan')
    .description('print what the next sync would change on each target (topics, partitions, configs, ACLs); changes nothing. Exit 0: in sync, 1: drift, 2: error')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias...>', 'only flows whose target is one of these clusters')
    .option('--json', 'print JSON for scripts')
    .action(async (file: string, opts: { clusters?: string[], json?: boolean }) => {
      process.exitCode = await planCommand(file, { clusters: opts.clusters, json: opts.json === true })
    })
  const offsets = program.command('offsets').description('consumer offsets across clusters')
  offsets.command('translate')
    .description('translate a group\'s committed offsets from --from to --to through the exact offset history; reads only')
    .argument('<file>', 'mm2.properties')
    .requiredOption('--from <alias>', 'the cluster the group committed on (the flow\'s source)')
    .requiredOption('--to <alias>', 'the cluster to translate to (the flow\'s target)')
    .requiredOption('--group <group>', 'the consumer group')
    .option('--json', 'print JSON for scripts')
    .action(async (file: string, opts: { from: string, to: string, group: string, json?: boolean }) => {
      process.exitCode = await translateCommand(file, { from: opts.from, to: opts.to, group: opts.group, json: opts.json === true })
    })
  program.command('validate')
    .description('check the configuration and print the resolved flows, secrets redacted; writes nothing')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias...>', 'only flows whose target is one of these clusters')
    .action((file: string, opts: { clusters?: string[] }) => {
      process.exitCode = validateCommand(file, opts.clusters)
    })
  program.command('topology')
    .description('list each cluster\'s upstream clusters and their distance in hops, from its heartbeat topics (as MM2\'s MirrorClient); read-only')
    .argument('<file>', 'mm2.properties')
    .option('--json', 'print JSON instead of a table')
    .action(async (file: string, opts: { json?: boolean }) => {
      process.exitCode = await topologyCommand(file, { json: opts.json === true })
    })
  return program
}

async function main (): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? ExitCodes.OK : ExitCodes.BAD_INPUT
      return
    }
    process.exitCode = reportFatal(err)
  }
}

/** Prints an error the user can act on and returns the exit code it deserves. */
export function reportFatal (err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`kmirror: ${err.message}\n`)
    return ExitCodes.BAD_INPUT
  }
  if (isKmirrorError(err)) {
    process.stderr.write(`kmirror: ${err.message} (${err.code})\n`)
    return ExitCodes.RUNTIME_FAILURE
  }
  process.stderr.write(`kmirror: unexpected error, please report it: ${err instanceof Error ? err.stack : String(err)}\n`)
  return ExitCodes.RUNTIME_FAILURE
}

await main()
