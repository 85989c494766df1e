/**
 * `kmirror verify FILE --from A --to B [--topics RE] [--since DATETIME] [--json]`: before a cutover, compares what
 * B holds with A, partition by partition (src/verify/). Reads both clusters, writes nothing.
 * Exit codes: 0 equal (duplicates of a re-copy are reported, not a difference), 1 differences (missing, extra or
 * differing records), 2 bad input (checked before any cluster is contacted), 3 a cluster could not be read
 * (unreachable, refused, too old), 4 an internal error (KMIRROR_ERR_INTERNAL, or a bug: as every other command).
 * A progress bar goes to stderr when it is a terminal.
 */
import { parseTimeoutSeconds } from './command-deadline.ts'
import { loadCheckedConfig, loadInput } from './config-input.ts'
import { capClientTimeouts } from '../kafka/client-options.ts'
import { ConfigError, ExitCodes } from '../errors.ts'
import { ISO_INSTANT_FORMS, parseIsoInstant } from '../failover/iso-instant.ts'
import { compileJavaRegexList, JavaRegexError } from '../policy/java-regex.ts'
import { writeJson } from '../redactor.ts'
import { findFlow } from '../runtime/offsets.ts'
import { reportCommandFailure } from './unexpected-errors.ts'
import { renderVerifyReport } from './verify-render.ts'
import { span, verifyFlow } from '../verify/verify.ts'
import { progressBar } from './verify-progress.ts'

export interface VerifyCommandOptions {
  readonly from: string
  readonly to: string
  readonly topics?: string
  readonly since?: string
  readonly json: boolean
  /** `--timeout`: seconds any one request may take. */
  readonly timeout: string
}

/** Source offsets per digest range, and difference ranges listed per partition. */
const RANGE_RECORDS = 10_000
const MAX_DIFFERENCES = 100

function usageProblem (options: VerifyCommandOptions): { topics: RegExp | null, since: number | null } | string {
  let topics: RegExp | null = null
  if (options.topics !== undefined) {
    try {
      topics = compileJavaRegexList([options.topics])
    } catch (err) {
      if (err instanceof JavaRegexError) return `--topics: ${err.message}`
      throw err
    }
  }
  let since: number | null = null
  if (options.since !== undefined) {
    since = parseIsoInstant(options.since)
    if (since === null) return `--since accepts an ISO 8601 instant only: ${ISO_INSTANT_FORMS}; got '${options.since}'`
  }
  return { topics, since }
}

export async function verifyCommand (file: string, options: VerifyCommandOptions): Promise<number> {
  const timeoutSeconds = parseTimeoutSeconds(options.timeout)
  if (timeoutSeconds === undefined) return ExitCodes.BAD_INPUT
  const usage = usageProblem(options)
  if (typeof usage === 'string') {
    process.stderr.write(`kmirror: ${usage}\n`)
    return ExitCodes.BAD_INPUT
  }
  const input = loadInput(() => loadCheckedConfig(file, config => findFlow(config, options.from, options.to), flow => [flow.source, flow.target]).picked)
  if (!input.ok) return input.exitCode
  const flow = input.value
  capClientTimeouts(Math.round(timeoutSeconds * 1000), 'request')
  const bar = process.stderr.isTTY ? progressBar(flow.name, text => process.stderr.write(text)) : undefined
  let report
  try {
    report = await verifyFlow({ flow, topics: usage.topics, since: usage.since, rangeRecords: RANGE_RECORDS, maxDifferences: MAX_DIFFERENCES, ...(bar === undefined ? {} : { onProgress: bar.update }) })
  } catch (err) {
    bar?.clear()
    if (err instanceof ConfigError) {
      process.stderr.write(`kmirror: ${err.message}\n`)
      return ExitCodes.BAD_INPUT
    }
    return reportCommandFailure(err, `cannot verify flow ${flow.name}`, '; nothing was written')
  }
  bar?.clear()
  if (options.json) writeJson(process.stdout, report)
  else process.stdout.write(renderVerifyReport(report, span))
  return report.equal ? ExitCodes.OK : ExitCodes.DRIFT
}

