/**
 * The text `kmirror validate` prints: what kmirror will do with the file, secrets redacted (src/config/secrets.ts).
 */
import { Redactor } from '../redactor.ts'
import { redactValue } from './secrets.ts'
import type { ClientProps, ClusterClientConfig, FlowConfig, KmirrorConfig } from './types.ts'

export function describeConfig (config: KmirrorConfig, flows: readonly FlowConfig[]): string {
  const selected = new Set(flows.map(flow => flow.name))
  const lines = [
    `configuration ${config.sourceFile}`,
    `clusters: ${config.clusters.join(', ')}`,
    'flows:',
    ...config.flows.map(flow => `  ${flow.name}  ${flowState(flow, selected)}`)
  ]
  for (const flow of flows) lines.push('', ...describeFlow(flow))
  lines.push('', ...describeWarnings(config))
  // Per-key redaction above; this hides the config's other secrets (values from config providers) wherever they appear.
  return new Redactor(config.secrets).redact(`${lines.join('\n')}\n`)
}

function flowState (flow: FlowConfig, selected: ReadonlySet<string>): string {
  if (!flow.enabled) return `disabled (set ${flow.name}.enabled = true to replicate)`
  return selected.has(flow.name) ? 'enabled' : 'enabled, not selected (its target is not among --clusters)'
}

function describeFlow (flow: FlowConfig): string[] {
  const policy = flow.replicationPolicy
  const settings: Array<[string, string]> = [
    ['topics', flow.topics.join(', ')],
    ['topics.exclude', flow.topicsExclude.join(', ')],
    ['replication.policy.class', `${policy.className} (separator ${JSON.stringify(policy.separator)})`],
    ['replication.factor', String(flow.replicationFactor)],
    ['config.properties.exclude', flow.configPropertiesExclude.join(', ')],
    ['refresh.topics', flow.refreshTopicsEnabled ? `every ${flow.refreshTopicsIntervalSeconds} s` : 'off'],
    ['offset-syncs', flow.emitOffsetSyncsEnabled ? `on the ${flow.offsetSyncsTopicLocation} cluster, offset.lag.max ${flow.offsetLagMax}` : 'off'],
    ['heartbeats.replication.enabled', String(flow.heartbeatsReplicationEnabled)],
    ['offset.storage.topic', `${flow.offsetStorageTopic} on ${flow.target.alias} (${flow.offsetStoragePartitions} partitions, replication factor ${flow.offsetStorageReplicationFactor})`],
    ['offset.flush.interval.ms', String(flow.offsetFlushIntervalMs)]
  ]
  const width = Math.max(...settings.map(([name]) => name.length))
  return [
    `flow ${flow.name} (${flow.enabled ? 'enabled' : 'disabled'})`,
    ...settings.map(([name, value]) => `  ${name.padEnd(width)}  ${value === '' ? '(empty)' : value}`),
    ...describeCluster('source', flow.source),
    ...describeCluster('target', flow.target)
  ]
}

function describeCluster (side: string, cluster: ClusterClientConfig): string[] {
  const bootstrap = cluster.bootstrapServers.length === 0 ? '(no bootstrap.servers)' : cluster.bootstrapServers.join(', ')
  return [
    `  ${side} ${cluster.alias}: ${bootstrap}`,
    ...describeClient('consumer', cluster.consumer),
    ...describeClient('producer', cluster.producer),
    ...describeClient('admin', cluster.admin)
  ]
}

function describeClient (role: string, props: ClientProps): string[] {
  const keys = Object.keys(props).filter(key => key !== 'bootstrap.servers').sort()
  if (keys.length === 0) return [`    ${role}: (defaults)`]
  return [`    ${role}:`, ...keys.map(key => `      ${key} = ${redactValue(key, props[key] ?? '')}`)]
}

function describeWarnings (config: KmirrorConfig): string[] {
  if (config.warnings.length === 0) return ['no warnings']
  return [
    `warnings (${config.warnings.length}):`,
    ...config.warnings.map(w => `  - ${w.key === undefined ? '' : `${w.key}: `}${w.message}`)
  ]
}
