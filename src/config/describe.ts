/**
 * The text `kmirror validate` prints: what kmirror will do with the file, secrets redacted (src/config/secrets.ts).
 * A setting whose value came from a `${provider:...}` reference is shown as written, with the reference: the
 * value itself is a secret.
 */
import { Redactor } from '../redactor.ts'
import { transactionTimeoutMs } from './transaction-timeout.ts'
import { redactValue } from './secrets.ts'
import type { ClientProps, ClusterClientConfig, FlowConfig, KmirrorConfig } from './types.ts'

export function describeConfig (config: KmirrorConfig, flows: readonly FlowConfig[]): string {
  const selected = new Set(flows.map(flow => flow.name))
  const asWritten = new Map(config.references.flows.map(flow => [flow.name, flow]))
  const lines = [
    `configuration ${config.sourceFile}`,
    `clusters: ${config.clusters.join(', ')}`,
    'flows:',
    ...config.flows.map(flow => `  ${flow.name}  ${flowState(flow, selected)}`)
  ]
  for (const flow of flows) lines.push('', ...describeFlow(flow, asWritten.get(flow.name) ?? flow))
  lines.push('', ...describeWarnings(config))
  // Per-key redaction above; this hides the config's other secrets (values from config providers) wherever they appear.
  return new Redactor(config.secrets).redact(`${lines.join('\n')}\n`)
}

function flowState (flow: FlowConfig, selected: ReadonlySet<string>): string {
  if (!flow.enabled) return `disabled (set ${flow.name}.enabled = true to replicate)`
  return selected.has(flow.name) ? 'enabled' : 'enabled, not selected (its target is not among --clusters)'
}

/** A line of a flow: its name, how it reads, and the connector properties it comes from, if any. */
type Setting = readonly [name: string, show: (flow: FlowConfig) => string, keys?: readonly string[]]

const SETTINGS: readonly Setting[] = [
  ['topics', flow => flow.topics.join(', '), ['topics']],
  ['topics.exclude', flow => flow.topicsExclude.join(', '), ['topics.exclude', 'topics.blacklist']],
  ['replication.policy.class', flow => `${flow.replicationPolicy.className} (separator ${JSON.stringify(flow.replicationPolicy.separator)})`, ['replication.policy.class', 'replication.policy.separator']],
  ['replication.factor', flow => String(flow.replicationFactor), ['replication.factor']],
  ['config.properties.exclude', flow => flow.configPropertiesExclude.join(', '), ['config.properties.exclude', 'config.properties.blacklist']],
  ['refresh.topics', flow => flow.refreshTopicsEnabled && flow.refreshTopicsIntervalSeconds > 0 ? `every ${flow.refreshTopicsIntervalSeconds} s` : 'off', ['refresh.topics.enabled', 'refresh.topics.interval.seconds']],
  ['offset-syncs', flow => flow.emitOffsetSyncsEnabled ? `on the ${flow.offsetSyncsTopicLocation} cluster, offset.lag.max ${flow.offsetLagMax}` : 'off', ['emit.offset-syncs.enabled', 'offset-syncs.topic.location', 'offset.lag.max']],
  ['heartbeats.replication.enabled', flow => String(flow.heartbeatsReplicationEnabled), ['heartbeats.replication.enabled']],
  ['offset.storage.topic', flow => `${flow.offsetStorageTopic} on ${flow.target.alias} (${flow.offsetStoragePartitions} partitions, replication factor ${flow.offsetStorageReplicationFactor})`],
  ['offset.flush.interval.ms', flow => String(flow.offsetFlushIntervalMs)],
  ['exactly.once.source.support', flow => describeExactlyOnce(flow)]
]

/** What the switch does for this flow and what it needs from the target (docs/operations.md "Exactly-once"). */
function describeExactlyOnce (flow: FlowConfig): string {
  const t = flow.target.alias
  if (!flow.exactlyOnce) return `at-least-once (set ${t}.exactly.once.source.support = enabled for exactly-once; preparing reads as disabled)`
  const timeoutMs = transactionTimeoutMs(flow)
  return `enabled: every round is a transaction on ${t} (transactional id ${flow.groupId}-<member name>, transaction timeout ${timeoutMs} ms); ` +
    `needs WRITE on the transactional ids prefixed ${flow.groupId}- and DESCRIBE on the groups prefixed ${flow.groupId}- on ${t}, a source read read_committed, and on a cluster of fewer than 3 brokers ` +
    'transaction.state.log.replication.factor and transaction.state.log.min.isr lowered to fit; ' +
    `offset syncs ${flow.offsetSyncsTopicLocation === 'target' ? 'join the transaction' : 'on the source cluster are written after each commit, outside it (as MM2)'}`
}

function describeFlow (flow: FlowConfig, asWritten: FlowConfig): string[] {
  const width = Math.max(...SETTINGS.map(([name]) => name.length))
  return [
    `flow ${flow.name} (${flow.enabled ? 'enabled' : 'disabled'})`,
    ...SETTINGS.map(setting => {
      const value = settingValue(setting, flow, asWritten)
      return `  ${setting[0].padEnd(width)}  ${value === '' ? '(empty)' : value}`
    }),
    ...describeCluster('source', flow.source, asWritten.source),
    ...describeCluster('target', flow.target, asWritten.target)
  ]
}

/** The setting as it reads; when a reference is behind it, the properties it comes from as written. */
function settingValue ([, show, keys]: Setting, flow: FlowConfig, asWritten: FlowConfig): string {
  const value = show(flow)
  if (show(asWritten) === value) return value
  const written = (keys ?? []).filter(key => asWritten.properties[key] !== flow.properties[key]).map(key => `${key} = ${asWritten.properties[key] ?? ''}`)
  return written.length > 0 ? `(from ${written.join(', ')})` : '(from a config provider reference)'
}

function describeCluster (side: string, cluster: ClusterClientConfig, asWritten: ClusterClientConfig): string[] {
  const servers = cluster.bootstrapServers.join(', ') === asWritten.bootstrapServers.join(', ') ? cluster.bootstrapServers : asWritten.bootstrapServers
  const bootstrap = servers.length === 0 ? '(no bootstrap.servers)' : servers.join(', ')
  return [
    `  ${side} ${cluster.alias}: ${bootstrap}`,
    ...describeClient('consumer', cluster.consumer, asWritten.consumer),
    ...describeClient('producer', cluster.producer, asWritten.producer),
    ...describeClient('admin', cluster.admin, asWritten.admin)
  ]
}

function describeClient (role: string, props: ClientProps, asWritten: ClientProps): string[] {
  const keys = Object.keys(props).filter(key => key !== 'bootstrap.servers').sort()
  if (keys.length === 0) return [`    ${role}: (defaults)`]
  // A value from a reference is shown as written: the reference, never the value it resolved to.
  return [`    ${role}:`, ...keys.map(key => `      ${key} = ${redactValue(key, asWritten[key] ?? props[key] ?? '')}`)]
}

function describeWarnings (config: KmirrorConfig): string[] {
  if (config.warnings.length === 0) return ['no warnings']
  return [
    `warnings (${config.warnings.length}):`,
    ...config.warnings.map(w => `  - ${w.key === undefined ? '' : `${w.key}: `}${w.message}`)
  ]
}
