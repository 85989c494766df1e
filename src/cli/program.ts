/**
 * The `kmirror` command line (started by main.ts). Commands set process.exitCode and return; process.exit is
 * called in src/cli/ only, by this file (a handle still open 1 s after a command returned), run-command.ts (a stop
 * that misses its 9 s deadline, or a handle still open 1 s after a completed stop), command-deadline.ts (a command
 * past its --timeout) and unexpected-errors.ts (an error nobody caught), and only run-command.ts handles signals.
 * Exit codes (src/errors.ts ExitCodes): 0 ok, 2 bad input (nothing written), 3 start failed, 4 runtime failure;
 * an error nobody caught is an internal error: 3 while `run` starts, 4 otherwise (unexpected-errors.ts).
 * Each command's module is imported when that command runs: `run` never loads the failover, plan or topology
 * code, and start-up time counts (time to first record).
 */
import { Command, CommanderError, Option } from 'commander'
import { ConfigError, ExitCodes, isKmirrorError } from '../errors.ts'
import { LOG_LEVELS, LogFormats, type LogFormat } from '../log-format.ts'
import { redactWrites } from '../redactor.ts'
import { packageVersion } from '../version.ts'
import { withCommandDeadline } from './command-deadline.ts'
import { checkDistinctClusters, checkDryRunOrExecute, parseJavaRegex, parseList, parsePort, parseTopicScope, rewriteListSpelling, secondsParser, type OffsetsSetFlags } from './flag-parsers.ts'
import { describeUnexpectedError, exitOnUnexpectedErrors, setUnexpectedErrorExitCode } from './unexpected-errors.ts'

/** How long a returned command may wait for its open handles before it exits anyway. */
const COMMAND_EXIT_GRACE_MS = 1000

const TIMEOUT_HELP = 'seconds the whole command may take, every cluster it talks to included: no request waits longer; past it, exit 3'

/** `--log-level`, checked before anything runs; KMIRROR_LOG_LEVEL (the older way) when not given. */
function logLevelOption (): Option {
  return new Option('--log-level <level>', 'least severe log level written').choices(LOG_LEVELS).default(process.env['KMIRROR_LOG_LEVEL'] ?? 'info')
}

/** `--log-format`: readable text when stderr is a terminal, JSON lines otherwise (log shippers, supervisors). */
function logFormatOption (): Option {
  const terminal = process.stderr.isTTY === true
  return new Option('--log-format <format>', 'log lines as JSON (one object per line) or text (one readable line per entry)')
    .choices(Object.values(LogFormats)).default(terminal ? LogFormats.TEXT : LogFormats.JSON, terminal ? 'text on a terminal' : 'json when stderr is not a terminal')
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
    .option('--clusters <alias>', 'only run flows whose target is one of these clusters (a,b or repeated)', parseList)
    .option('--progress-interval <seconds>', 'seconds between progress lines on stderr (0 = none)', secondsParser('none'), 30)
    .option('--http-port <port>', 'serve /metrics (Prometheus), /healthz and /status on this port', parsePort)
    .option('--http-host <host>', 'address the HTTP endpoint listens on (0.0.0.0: every interface)', '127.0.0.1')
    .option('--http-tls-cert <file>', 'serve HTTPS with this PEM certificate (and --http-tls-key)')
    .option('--http-tls-key <file>', 'the PEM private key of --http-tls-cert (unencrypted)')
    .option('--http-auth-file <file>', 'require basic authentication on every path: lines user:hash, hash from `openssl passwd -5`')
    .addOption(logLevelOption())
    .addOption(logFormatOption())
    .action(async (file: string, opts: { clusters?: string[], progressInterval: number, httpPort?: number, httpHost: string, httpTlsCert?: string, httpTlsKey?: string, httpAuthFile?: string, logLevel: string, logFormat: LogFormat }) => {
      setUnexpectedErrorExitCode(ExitCodes.START_FAILED)
      const [{ runCommand }, { createLogger, stderrSync }] = await Promise.all([import('./run-command.ts'), import('../logger.ts')])
      process.exitCode = await runCommand(file, {
        clusters: opts.clusters,
        progressIntervalSeconds: opts.progressInterval,
        http: opts.httpPort === undefined ? undefined : { host: opts.httpHost, port: opts.httpPort },
        httpAccess: { tlsCert: opts.httpTlsCert, tlsKey: opts.httpTlsKey, authFile: opts.httpAuthFile }
      }, createLogger(opts.logLevel, undefined, stderrSync(), opts.logFormat))
    })
  program.command('plan')
    .description('print what the next sync would change on each target (topics, partitions, configs, ACLs); changes nothing. Exit 0: in sync, 1: drift, 2: bad configuration or usage, 3: a cluster could not be read')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias>', 'only flows whose target is one of these clusters (a,b or repeated)', parseList)
    .option('--json', 'print JSON for scripts')
    .option('--timeout <seconds>', TIMEOUT_HELP, '30')
    .action(async (file: string, opts: { clusters?: string[], json?: boolean, timeout: string }) => {
      const { planCommand } = await import('./plan-command.ts')
      process.exitCode = await withCommandDeadline('plan', opts.timeout, async () => await planCommand(file, { clusters: opts.clusters, json: opts.json === true }))
    })
  const offsets = program.command('offsets').description('consumer offsets across clusters')
  offsets.command('translate')
    .description('translate a group\'s committed offsets from --from to --to through the exact offset history; reads only')
    .argument('<file>', 'mm2.properties')
    .requiredOption('--from <alias>', 'the cluster the group committed on (the flow\'s source)')
    .requiredOption('--to <alias>', 'the cluster to translate to (the flow\'s target)')
    .requiredOption('--group <group>', 'the consumer group')
    .option('--json', 'print JSON for scripts')
    .option('--timeout <seconds>', TIMEOUT_HELP, '30')
    .hook('preAction', checkDistinctClusters)
    .action(async (file: string, opts: { from: string, to: string, group: string, json?: boolean, timeout: string }) => {
      const { translateCommand } = await import('./offsets-command.ts')
      process.exitCode = await withCommandDeadline('offsets translate', opts.timeout, async () => await translateCommand(file, { from: opts.from, to: opts.to, group: opts.group, json: opts.json === true }))
    })
  program.command('status')
    .description('per flow and partition: last replicated source offset, its target offset, source log end, lag in records and seconds, and the members of the flow\'s group with what each owns; reads only')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias>', 'only flows whose target is one of these clusters (a,b or repeated)', parseList)
    .option('--json', 'print JSON for scripts')
    .option('--timeout <seconds>', TIMEOUT_HELP, '30')
    .action(async (file: string, opts: { clusters?: string[], json?: boolean, timeout: string }) => {
      const [{ statusCommand }, { readGroupMembership }] = await Promise.all([import('./status-command.ts'), import('../runtime/membership-reader.ts')])
      process.exitCode = await withCommandDeadline('status', opts.timeout, async () => await statusCommand(file, { clusters: opts.clusters, json: opts.json === true }, readGroupMembership))
    })
  offsets.command('set')
    .description('set consumer groups\' committed offsets on one cluster, with kafka-consumer-groups.sh --reset-offsets flags: a plan by default (--dry-run), ' +
      '--execute (or --apply) writes it. A group with active members is refused; a skip (moving past records the group never processed) needs --force; ' +
      'positions outside [log start, end] are refused. Exit 0: nothing to do or applied, 1: plan has moves, 2: bad input, 3: cluster unreadable, 5: refused')
    .argument('<file>', 'mm2.properties')
    .requiredOption('--cluster <alias>', 'the cluster holding the groups')
    .option('--group <group>', 'the consumer groups (g1,g2 or repeated)', parseList)
    .option('--all-groups', 'every consumer group of the cluster')
    .option('--topic <topic[:partitions]>', 'a topic (every partition) or topic:0,2 (those partitions); repeat for several', parseTopicScope)
    .option('--all-topics', 'every partition each group has a committed offset for')
    .option('--partition <n>', 'only this partition of the one --topic (same as --topic T:N)')
    .option('--to-offset <n>', 'this offset')
    .option('--to-earliest', 'the log start')
    .option('--to-latest', 'the end (high watermark)')
    .option('--to-current', 'the current committed offset (with --export: save the positions)')
    .option('--to-datetime <iso8601>', 'the first record at or after this time (the end if none)')
    .option('--by-duration <duration>', 'the first record at or after now minus this ISO-8601 duration PnDTnHnMnS (e.g. PT30M, P1D)')
    .option('--shift-by <n>', 'the current committed offset plus N (negative: back)')
    .option('--from-file <csv>', 'the offsets of a kafka-consumer-groups.sh --export CSV (topic,partition,offset or group,topic,partition,offset lines)')
    .option('--export', 'print the planned offsets as kafka-consumer-groups.sh CSV (for --from-file) instead of a table')
    .option('--dry-run', 'only print the plan (the default)')
    .option('--execute', 'write the plan (same as --apply)')
    .option('--apply', 'write the plan')
    .option('--force', 'allow a skip')
    .option('--json', 'print JSON for scripts')
    .option('--timeout <seconds>', TIMEOUT_HELP, '30')
    .hook('preAction', checkDryRunOrExecute)
    .action(async (file: string, opts: OffsetsSetFlags) => {
      const { offsetsSetCommand } = await import('./failover-command.ts')
      const { timeout, dryRun: _dryRun, execute, ...rest } = opts
      const apply = opts.apply === true || execute === true
      process.exitCode = await withCommandDeadline('offsets set', timeout, async ms => await offsetsSetCommand(file, { ...rest, apply, force: opts.force === true, json: opts.json === true, timeoutSeconds: ms / 1000 }))
    })
  for (const kind of ['failover', 'failback'] as const) {
    program.command(kind)
      .description(kind === 'failover'
        ? 'move consumer groups from cluster --from (A) to the remote topics on --to (B) at the exact translated position: a plan by default, --apply writes it. ' +
          'Works with A unreachable (from the last checkpoints on B). Refuses groups with active members on B, and rewinds or skips without --force; idempotent. ' +
          'Exit 0: nothing to do or applied, 1: plan has moves, 2: bad input, 3: a cluster or a group\'s data unreadable, 5: refused'
        : 'move consumer groups that ran on the remote topics of --from (B) back to the original topics on --to (A) at the exact position (inverse translation of the A->B flow): ' +
          'a plan by default, --apply writes it. Refuses groups with active members on A, and rewinds or skips without --force. ' +
          'Exit 0: nothing to do or applied, 1: plan has moves, 2: bad input, 3: a cluster or a group\'s data unreadable, 5: refused')
      .argument('<file>', 'mm2.properties')
      .requiredOption('--from <alias>', kind === 'failover' ? 'the cluster the groups leave (the flow\'s source)' : 'the cluster the groups leave (the flow\'s target)')
      .requiredOption('--to <alias>', kind === 'failover' ? 'the cluster the groups move to (the flow\'s target)' : 'the cluster the groups return to (the flow\'s source)')
      .option('--group <group>', 'the consumer groups (g1,g2 or repeated)', parseList)
      .option('--groups <regex>', 'every group whose whole id matches this Java regex', parseJavaRegex)
      .option('--apply', 'write the plan')
      .option('--force', 'allow rewinds and skips (never writes a group with active members)')
      .option('--timeout <seconds>', `${TIMEOUT_HELP}; also how long to wait for the --from cluster that may be down`, '15')
      .option('--json', 'print JSON for scripts')
      .hook('preAction', checkDistinctClusters)
      .action(async (file: string, opts: { from: string, to: string, group?: string[], groups?: string, apply?: boolean, force?: boolean, timeout: string, json?: boolean }) => {
        const { failbackCommand, failoverCommand } = await import('./failover-command.ts')
        process.exitCode = await withCommandDeadline(kind, opts.timeout, async ms => {
          const options = { from: opts.from, to: opts.to, group: opts.group, groups: opts.groups, apply: opts.apply === true, force: opts.force === true, json: opts.json === true, timeoutSeconds: ms / 1000 }
          return kind === 'failover' ? await failoverCommand(file, options) : await failbackCommand(file, options)
        })
      })
  }
  program.command('verify')
    .description('before a cutover, compare what --to holds with --from, partition by partition, offsets paired through the flow\'s offset history: ' +
      'record counts and digests of key, value, headers and timestamp per range; names missing, extra and differing records with their offsets, and duplicates of a re-copy after a restart. ' +
      'Reads both clusters (read_committed), writes nothing. Exit 0: equal (duplicates alone included), 1: differences, 2: bad input, 3: a cluster could not be read, 4: internal error')
    .argument('<file>', 'mm2.properties')
    .requiredOption('--from <alias>', 'the flow\'s source cluster')
    .requiredOption('--to <alias>', 'the flow\'s target cluster')
    .option('--topics <regex>', 'only source topics whose whole name matches this Java regex', parseJavaRegex)
    .option('--since <iso8601>', 'only records at or after this instant (e.g. 2026-11-30T14:00:00Z)')
    .option('--json', 'print JSON for scripts')
    .option('--timeout <seconds>', 'seconds any one request to a cluster may take; past it, exit 3', '30')
    .hook('preAction', checkDistinctClusters)
    .action(async (file: string, opts: { from: string, to: string, topics?: string, since?: string, json?: boolean, timeout: string }) => {
      const { verifyCommand } = await import('./verify-command.ts')
      process.exitCode = await verifyCommand(file, { from: opts.from, to: opts.to, topics: opts.topics, since: opts.since, json: opts.json === true, timeout: opts.timeout })
    })
  program.command('validate')
    .description('check the configuration and print the resolved flows, secrets redacted; writes nothing')
    .argument('<file>', 'mm2.properties')
    .option('--clusters <alias>', 'only flows whose target is one of these clusters (a,b or repeated)', parseList)
    .action(async (file: string, opts: { clusters?: string[] }) => {
      const { validateCommand } = await import('./validate-command.ts')
      process.exitCode = validateCommand(file, opts.clusters)
    })
  program.command('topology')
    .description('list each cluster\'s upstream clusters and their distance in hops, from its heartbeat topics (as MM2\'s MirrorClient); read-only')
    .argument('<file>', 'mm2.properties')
    .option('--json', 'print JSON instead of a table')
    .option('--timeout <seconds>', TIMEOUT_HELP, '30')
    .action(async (file: string, opts: { json?: boolean, timeout: string }) => {
      const { topologyCommand } = await import('./topology-command.ts')
      process.exitCode = await withCommandDeadline('topology', opts.timeout, async () => await topologyCommand(file, { json: opts.json === true }))
    })
  return program
}

export async function main (): Promise<void> {
  // Whatever a command prints goes through the redactor, which knows the secrets of the loaded configuration.
  redactWrites(process.stdout)
  redactWrites(process.stderr)
  // Node would print an uncaught error itself, unredacted: report it through the streams above instead.
  exitOnUnexpectedErrors()
  try {
    const program = buildProgram()
    await program.parseAsync(rewriteListSpelling(program, process.argv.slice(2)), { from: 'user' })
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? ExitCodes.OK : ExitCodes.BAD_INPUT
      return
    }
    process.exitCode = reportFatal(err)
  } finally {
    exitSoonAfterReturn()
  }
}

/**
 * A command that has returned ends within a second with its exit code, even when a client left a handle open (a
 * connection attempt to a broker that drops packets waits for its connect timeout; closing does not cut it short).
 * Unref'd: a clean event loop exits at once; output is already written (pipes and files are synchronous on POSIX).
 */
function exitSoonAfterReturn (): void {
  setTimeout(() => process.exit(), COMMAND_EXIT_GRACE_MS).unref()
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
  process.stderr.write(`${describeUnexpectedError(err)}\n`)
  return ExitCodes.RUNTIME_FAILURE
}

