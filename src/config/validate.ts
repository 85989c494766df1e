/**
 * Every problem of a configuration, collected in one pass so the user can fix them all at once.
 * Structure here (clusters, lines, key shapes, what enabled flows need); values in validate-values.ts.
 */
import type { ConfigProblem } from '../errors.ts'
import { zeroIntervalProblems } from './job-intervals.ts'
import { classifyKey, topLevelUsage, Usages } from './key-shapes.ts'
import type { ParsedProperties } from './properties.ts'
import { closest, didYouMean } from './suggest.ts'
import type { ClientProps, ClusterClientConfig, FlowConfig } from './types.ts'
import { splitList } from './values.ts'

/** The aliases of `clusters`, and the problems with them. Only well-formed aliases are returned. */
export function readClusters (values: Readonly<Record<string, string>>): { aliases: string[], problems: ConfigProblem[] } {
  const written = values.clusters
  const example = 'list the cluster aliases, e.g. clusters = A, B'
  if (written === undefined) return { aliases: [], problems: [{ key: 'clusters', message: `is missing: ${example}` }] }
  const list = splitList(written)
  if (list.length === 0) return { aliases: [], problems: [{ key: 'clusters', message: `is empty: ${example}` }] }
  const problems: ConfigProblem[] = []
  const aliases: string[] = []
  for (const alias of list) {
    const message = aliasProblem(alias, aliases)
    if (message === undefined) aliases.push(alias)
    else problems.push({ key: 'clusters', message })
  }
  return { aliases, problems }
}

function aliasProblem (alias: string, seen: readonly string[]): string | undefined {
  if (alias === '') return 'contains an empty alias (two commas in a row, or a comma at an end): remove the extra comma'
  if (/\s/.test(alias)) return `alias ${JSON.stringify(alias)} contains whitespace, which cannot start a key such as ${alias}.bootstrap.servers: rename it`
  if (alias.includes('->')) return `alias ${JSON.stringify(alias)} contains "->", which separates the aliases of a flow key such as A->B.enabled: rename it`
  if (seen.includes(alias)) return `lists ${alias} twice: list each alias once`
  return undefined
}

export function validateStructure (parsed: ParsedProperties, aliases: readonly string[]): ConfigProblem[] {
  return [...validateLines(parsed, aliases), ...validateKeyShapes(Object.keys(parsed.values), aliases)]
}

/** Lines Java would accept but that are almost certainly mistakes. */
function validateLines (parsed: ParsedProperties, aliases: readonly string[]): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const entry of parsed.lines) {
    if (entry.hasSeparator || isRecognisedKey(entry.key, aliases)) continue
    problems.push({
      message: `line ${entry.line}: ${JSON.stringify(entry.text.trim())} has no '=' or ':' and ${JSON.stringify(entry.key)} is not a known key: write key = value, or start the line with # to make it a comment`
    })
  }
  const dangling = parsed.danglingContinuation
  if (dangling !== undefined) {
    problems.push({
      key: dangling.key,
      message: `line ${dangling.line}: the value ends with a '\\' line continuation but the file ends there (was it cut short?): complete the value or remove the trailing backslash`
    })
  }
  return problems
}

/**
 * A Java `key value` line (no `=` or `:`) is only plausible when the key has a shape MM2 reads. Flow and
 * cluster shapes with an unknown alias count as recognised: the unknown alias is the problem to report.
 */
function isRecognisedKey (key: string, aliases: readonly string[]): boolean {
  return classifyKey(key, aliases).kind !== 'top-level' || topLevelUsage(key) !== Usages.UNKNOWN
}

function validateKeyShapes (keys: readonly string[], aliases: readonly string[]): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const known = `clusters = ${aliases.join(', ')}`
  for (const key of keys) {
    const shape = classifyKey(key, aliases)
    if (shape.kind === 'unknown-flow') {
      const unknown = [shape.source, shape.target].filter(alias => !aliases.includes(alias))
      const names = unknown.map(alias => `${alias}${didYouMean(closest(alias, aliases))}`).join(' and ')
      problems.push({ key, message: `names cluster alias ${names}, not in ${known}: fix the alias or add it to clusters` })
    } else if (shape.kind === 'unknown-cluster') {
      problems.push({ key, message: `${shape.alias}${didYouMean(closest(shape.alias, aliases))} is not a cluster alias (${known}): fix the alias, add it to clusters, or remove the key` })
    } else if (shape.kind === 'flow' && shape.source === shape.target) {
      problems.push({ key, message: `${shape.source}->${shape.target} is not a flow (a cluster cannot replicate to itself): remove the key` })
    }
  }
  return problems
}

/** What enabled flows need from their clusters: a bootstrap list, and a SASL mechanism kmirror can use. */
export function validateEnabledFlows (flows: readonly FlowConfig[]): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const flow of flows.filter(f => f.enabled)) {
    for (const side of [flow.source, flow.target]) problems.push(...clusterProblems(side, flow.name))
    problems.push(...offsetSyncsProblems(flow), ...groupTimeoutProblems(flow), ...exactlyOnceProblems(flow), ...zeroIntervalProblems(flow))
  }
  return dedupe(problems)
}

/**
 * The group's heartbeats must come well inside its session timeout, or every member's lease is always over; and
 * inside its rebalance timeout twice over, or every member drops its work at each rebalance (a lease ends
 * heartbeat.interval.ms before a deadline counted from a send time up to a heartbeat before the rebalance).
 */
function groupTimeoutProblems (flow: FlowConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  if (flow.heartbeatIntervalMs >= flow.sessionTimeoutMs) {
    problems.push({ key: `${flow.name}.heartbeat.interval.ms`, message: `is ${flow.heartbeatIntervalMs}, not below session.timeout.ms (${flow.sessionTimeoutMs}): an instance could never hold work; set it to about a third of session.timeout.ms (defaults 3000 and 10000)` })
  }
  if (flow.rebalanceTimeoutMs <= 2 * flow.heartbeatIntervalMs) {
    problems.push({ key: `${flow.name}.rebalance.timeout.ms`, message: `is ${flow.rebalanceTimeoutMs}, not above twice heartbeat.interval.ms (${flow.heartbeatIntervalMs}): every instance would stop its work at each rebalance; set it well above (defaults 60000 and 3000)` })
  }
  return problems
}

function clusterProblems (cluster: ClusterClientConfig, flowName: string): ConfigProblem[] {
  const { alias } = cluster
  if (cluster.bootstrapServers.length === 0) {
    return [{ key: `${alias}.bootstrap.servers`, message: `is missing: set it to the host:port list of cluster ${alias} (flow ${flowName} uses it)` }]
  }
  return [cluster.consumer, cluster.producer, cluster.admin].flatMap(props => securityProblems(props, alias))
}

/** Problems hidden in Java client defaults: a SASL protocol without a mechanism means GSSAPI. */
function securityProblems (props: ClientProps, alias: string): ConfigProblem[] {
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').trim().toUpperCase()
  if (!protocol.startsWith('SASL_') || props['sasl.mechanism'] !== undefined) return []
  return [{ key: `${alias}.sasl.mechanism`, message: `is not set, so the Java default GSSAPI (Kerberos) applies, which kmirror does not support: set ${alias}.sasl.mechanism to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER` }]
}

/**
 * Exactly-once needs a read_committed source read, as MM2 (KAFKA-14021: the connector reports exactly-once
 * unsupported otherwise): copying aborted records could never be undone. kmirror defaults to read_committed.
 */
function exactlyOnceProblems (flow: FlowConfig): ConfigProblem[] {
  if (!flow.exactlyOnce || (flow.source.consumer['isolation.level'] ?? '').trim().toLowerCase() !== 'read_uncommitted') return []
  const key = `${flow.source.alias}.consumer.isolation.level`
  return [{ key, message: `is read_uncommitted while flow ${flow.name} runs exactly-once (${flow.target.alias}.exactly.once.source.support = enabled): aborted source records would be copied. Set ${key} = read_committed (kmirror's default) or turn exactly-once off` }]
}

/** MirrorSourceConnector rejects its config when offset syncs are off but an offset-syncs key is set. */
function offsetSyncsProblems (flow: FlowConfig): ConfigProblem[] {
  if (flow.emitOffsetSyncsEnabled) return []
  return Object.keys(flow.properties)
    .filter(key => key.startsWith('offset-syncs.') || key.startsWith('offset-syncs-'))
    .map(key => ({
      key,
      message: `is set while flow ${flow.name} has emit.offset-syncs.enabled = false, a combination MM2 rejects: remove ${key} or re-enable offset syncs`
    }))
}

export function dedupe (problems: readonly ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>()
  return problems.filter(problem => {
    const id = `${problem.key ?? ''}\u0000${problem.message}`
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}
