/**
 * Which topic configs a remote topic gets, MM2's DefaultConfigPropertyFilter and MirrorSourceConnector.targetConfig
 * rule for rule (mm2-spec §4), as pure functions over described configs.
 *
 * - Creation copies the source's non-default entries: set on the topic or dynamic broker values; with
 *   `use.defaults.from=source` its default entries too (MM2's targetConfig with incremental=false keeps an entry
 *   that is a default when shouldReplicateSourceDefault says so), so the remote topic starts with the source's
 *   values instead of the target's defaults, as config sync would set them anyway.
 * - Config sync takes every source entry except read-only, sensitive, static-broker and excluded ones. A source
 *   entry that is a default either reverts the target to its own default (`use.defaults.from=target`, MM2's
 *   default) or is copied as a value (`=source`). Every other entry is set to the source value.
 *
 * Unlike MM2, which sends every entry every period, only real differences become changes: a default is reverted
 * only where the target overrides it, a value is set only where the target's differs.
 */
import type { FlowConfig } from '../config/types.ts'
import { ConfigSourceKinds, type TopicConfigEntry } from '../kafka/admin-client.ts'
import { compileJavaRegexList } from '../policy/java-regex.ts'

export interface ConfigChange {
  readonly name: string
  /** `set` writes `newValue`; `delete` reverts the key to the target cluster's default. */
  readonly op: 'set' | 'delete'
  /** The target's current value, null when it has none. */
  readonly oldValue: string | null
  /** The value written; null for `delete` (the target's default, whatever it is). */
  readonly newValue: string | null
}

export interface ConfigSyncRules {
  /** `config.properties.exclude`, compiled: matching names are never copied, set or reverted. */
  readonly exclude: RegExp | null
  readonly useDefaultsFrom: FlowConfig['useDefaultsFrom']
}

export function configSyncRules (flow: Pick<FlowConfig, 'configPropertiesExclude' | 'useDefaultsFrom'>): ConfigSyncRules {
  return { exclude: compileJavaRegexList(flow.configPropertiesExclude), useDefaultsFrom: flow.useDefaultsFrom }
}

/**
 * The source configs MM2 copies when it creates a remote topic: set explicitly (or, with `use.defaults.from=source`,
 * defaults too), writable, not secret, not excluded. Static broker values never: they are the source brokers' files.
 */
export function selectTopicConfigs (entries: readonly TopicConfigEntry[], exclude: RegExp | null, useDefaultsFrom: ConfigSyncRules['useDefaultsFrom'] = 'target'): Record<string, string> {
  const copied = new Set<string>([ConfigSourceKinds.TOPIC, ConfigSourceKinds.DYNAMIC_BROKER])
  if (useDefaultsFrom === 'source') copied.add(ConfigSourceKinds.DEFAULT)
  const out: Record<string, string> = {}
  for (const e of entries) {
    if (e.value === null || e.readOnly || e.sensitive) continue
    if (!copied.has(e.source)) continue
    if (exclude?.test(e.name) === true) continue
    out[e.name] = e.value
  }
  return out
}

/** Whether a source entry takes part in config sync at all (MM2's targetConfig with incremental=true). */
export function isSyncedConfig (entry: TopicConfigEntry, exclude: RegExp | null): boolean {
  return !entry.readOnly && !entry.sensitive && entry.source !== ConfigSourceKinds.STATIC_BROKER && exclude?.test(entry.name) !== true
}

/**
 * The incremental changes that make the target topic's configs follow the source's, sorted by name.
 * Keys the source does not report, and excluded keys, are never touched.
 * Example, `use.defaults.from=target`, nothing excluded: source `retention.bytes` default -1 and `cleanup.policy`
 * compact (set on the topic); target `retention.bytes` 2000 and `cleanup.policy` delete, both set on the topic:
 * delete `retention.bytes` (the target's default comes back), set `cleanup.policy` to compact.
 */
export function planTopicConfigChanges (source: readonly TopicConfigEntry[], target: readonly TopicConfigEntry[], rules: ConfigSyncRules): ConfigChange[] {
  const current = new Map(target.map(e => [e.name, e]))
  const changes: ConfigChange[] = []
  for (const entry of source) {
    if (!isSyncedConfig(entry, rules.exclude)) continue
    const change = changeFor(entry, current.get(entry.name), rules.useDefaultsFrom)
    if (change !== null) changes.push(change)
  }
  return changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function changeFor (entry: TopicConfigEntry, target: TopicConfigEntry | undefined, useDefaultsFrom: ConfigSyncRules['useDefaultsFrom']): ConfigChange | null {
  if (target?.readOnly === true) return null
  const isDefault = entry.source === ConfigSourceKinds.DEFAULT
  // A default of a key the target does not know (an older Kafka) needs nothing; a real value is still sent,
  // so the target's refusal names the incompatibility.
  if (isDefault && target === undefined) return null
  if (isDefault && useDefaultsFrom === 'target') {
    return target?.source === ConfigSourceKinds.TOPIC ? { name: entry.name, op: 'delete', oldValue: target.value, newValue: null } : null
  }
  if (entry.value === null || target?.value === entry.value) return null
  return { name: entry.name, op: 'set', oldValue: target?.value ?? null, newValue: entry.value }
}
