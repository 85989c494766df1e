/**
 * Non-fatal findings: keys MM2 (and so kmirror) would silently ignore, misspellings, renamed keys, and
 * settings whose effect surprises. Each names the key and says what to write instead.
 */
import {
  candidateNames, classifyKey, clientKeyOf, clusterRestUsage, flowRestUsage, isPassedToWorkers, topLevelUsage, unknownSecurityKey, Usages
} from './key-shapes.ts'
import type { ParsedProperties } from './properties.ts'
import { quoteLiterally, type Quote, type Quoted } from './quoted-values.ts'
import { defaultValue, findKey, Scopes, type KeySpec } from './schema.ts'
import { isConnectionKey } from './resolve.ts'
import { redactValue } from './secrets.ts'
import { clientSpec } from './validate-values.ts'
import { closest, didYouMean } from './suggest.ts'
import { javaTrim, parseConfigBoolean, splitList } from './values.ts'

export interface ConfigWarning { key?: string, message: string }
type Props = Readonly<Record<string, string>>

/** Warnings about PARSED (values resolved); `quote` says how a message may show each value (quoted-values.ts). */
export function collectWarnings (parsed: ParsedProperties, aliases: readonly string[], quote: Quote = quoteLiterally): ConfigWarning[] {
  const warnings = [...duplicateWarnings(parsed), ...aliasWarnings(parsed.values, aliases)]
  for (const [key, value] of Object.entries(parsed.values)) {
    const shape = classifyKey(key, aliases)
    const shown = quote(key, value)
    if (shape.kind === 'top-level') warnings.push(...topLevelWarnings(key, value, shown, aliases))
    if (shape.kind === 'flow') {
      warnings.push(...flowWarnings(key, shape.rest, shape.source, shape.target, value, shown))
      warnings.push(...shadowedWarnings(key, shape.rest, shape.source, shape.target, parsed.values))
    }
    if (shape.kind === 'cluster') warnings.push(...clusterWarnings(key, shape.rest, shape.alias, value, shown, aliases))
    if (shape.kind === 'flow' || shape.kind === 'cluster') warnings.push(...isolationWarnings(key, value, shape.rest))
    warnings.push(...inlineCommentWarnings(key, value, shown, aliases))
  }
  return warnings
}

function duplicateWarnings (parsed: ParsedProperties): ConfigWarning[] {
  const lines = new Map<string, number[]>()
  for (const entry of parsed.lines) lines.set(entry.key, [...(lines.get(entry.key) ?? []), entry.line])
  return [...lines].filter(([, at]) => at.length > 1).map(([key, at]) => ({
    key,
    message: `is set on lines ${at.join(', ')}; the last one (line ${at.at(-1)}) wins, as in Java: keep only one`
  }))
}

/** An alias containing the policy separator makes its remote topics look like another cluster's. */
function aliasWarnings (values: Props, aliases: readonly string[]): ConfigWarning[] {
  const separator = values['replication.policy.separator'] ?? defaultValue('replication.policy.separator') ?? '.'
  if (separator === '') return []
  return aliases.filter(alias => alias.includes(separator)).map(alias => ({
    key: 'clusters',
    message: `alias ${alias} contains the replication policy separator ${JSON.stringify(separator)}: its remote topics (${alias}${separator}topic) read as coming from cluster ${alias.split(separator)[0] ?? ''}, which breaks cycle detection; prefer an alias without it`
  }))
}

function topLevelWarnings (key: string, value: string, shown: Quoted, aliases: readonly string[]): ConfigWarning[] {
  const usage = topLevelUsage(key)
  const [a = 'A', b = 'B'] = aliases
  if (usage === Usages.UNKNOWN) {
    const suggestion = unknownSecurityKey(key)?.suggestion ?? closest(key, candidateNames('top-level'))
    return [{ key, message: `is not a key kmirror or MM2 knows, so it is ignored${didYouMean(suggestion)}` }]
  }
  if (usage === Usages.DROPPED) return [{ key, message: droppedMessage(key, a, b) }]
  const warnings = specWarnings(key, findKey(key), value, shown)
  if (key === 'enabled' && parseConfigBoolean(value) === true) {
    warnings.push({ key, message: `turns on every flow that has heartbeats on (MM2 does the same): to replicate one direction only, remove it and set e.g. ${a}->${b}.enabled = true` })
  }
  if (key === 'enabled' && parseConfigBoolean(value) === undefined) {
    warnings.push({ key, message: `${shown.text} is read as false (MM2 reads it with Boolean.parseBoolean): write true to turn on every flow, or false` })
  }
  return warnings
}

/** MM2 keeps only connector ConfigDef keys at top level (mm2-spec §1.1 pitfall); say where the key works. */
function droppedMessage (key: string, a: string, b: string): string {
  const ignored = 'MM2 ignores it at top level, and so does kmirror'
  const spec = findKey(key)
  if (spec?.scope === Scopes.WORKER) return `${ignored}: set it per target cluster, e.g. ${b}.${key}`
  if (spec?.scope === Scopes.CLIENT_ROLE) return `${ignored} (client settings are read per cluster and client role): set it as e.g. ${a}.${spec.roles?.[0] ?? 'consumer'}.${key}`
  if (spec?.perFlowOnly === true) return `${ignored}: set it per flow, e.g. ${a}->${b}.${key}`
  const client = clientKeyOf(key)
  if (client !== undefined && !client.prefix.includes('.cluster.') && !client.prefix.startsWith('producer.override')) {
    return `${ignored} (client settings are not read at top level): set it per cluster, e.g. ${a}.${key.replace(/^(source|target)\./, '')}, or per flow, e.g. ${a}->${b}.${key}`
  }
  return `${ignored}: set it per flow, e.g. ${a}->${b}.${key}`
}

function flowWarnings (key: string, rest: string, source: string, target: string, value: string, shown: Quoted): ConfigWarning[] {
  if (rest.startsWith('config.providers')) return [{ key, message: providersAtTopLevelOnly(rest) }]
  const usage = flowRestUsage(rest)
  const security = unknownSecurityKey(rest)
  if (security !== undefined) {
    return [{ key, message: `is not a Kafka client setting, so no client of flow ${source}->${target} reads it${didYouMean(security.suggestion === undefined ? undefined : `${source}->${target}.${security.suggestion}`)}` }]
  }
  if (usage === Usages.UNKNOWN) {
    const suggestion = closest(rest, candidateNames('flow'))
    return [{ key, message: `is not a connector key MM2 knows, so it is ignored${didYouMean(suggestion === undefined ? undefined : `${source}->${target}.${suggestion}`)}` }]
  }
  if (usage === Usages.DROPPED) return [{ key, message: misplacedInFlowMessage(rest, source, target) }]
  const warnings = specWarnings(key, findKey(rest) ?? clientSpec(rest), value, shown)
  const producerKey = /^(?:target\.)?producer\.(?!override\.)(.+)$/.exec(rest)?.[1]
  if (producerKey !== undefined) warnings.push({ key, message: dataProducerMessage(producerKey, source, target) })
  if (rest === 'enabled' && parseConfigBoolean(value) === undefined) {
    warnings.push({ key, message: `${shown.text} is read as false (MM2 reads it with Boolean.parseBoolean): write true to replicate ${source}->${target}, or false` })
  }
  return warnings
}

/**
 * MM2 writes replicated data with the Connect worker's producer (`B.producer.*`, then the connector's
 * `producer.override.*`); the connector's own `producer.*` and `target.producer.*` reach only its offset-syncs
 * producer. kmirror has one target producer for both, so such a key changes more under kmirror than under MM2.
 */
function dataProducerMessage (producerKey: string, source: string, target: string): string {
  return `is read by kmirror's target producer, which writes the replicated records too; MM2 applies it to its offset-syncs producer only ` +
    `(its replicated records go through the Connect worker's producer): for the same effect under both, set ${target}.producer.${producerKey} ` +
    `or ${source}->${target}.producer.override.${producerKey}`
}

function misplacedInFlowMessage (rest: string, source: string, target: string): string {
  const spec = findKey(rest)
  if (spec?.scope === Scopes.CLIENT_ROLE) {
    const role = spec.roles?.[0] ?? 'consumer'
    const side = role === 'producer' ? 'target' : 'source'
    return `has no effect per flow: client settings are read per client role, set ${source}->${target}.${side}.${role}.${rest} for this flow or ${side === 'source' ? source : target}.${role}.${rest} for the cluster`
  }
  if (spec?.scope === Scopes.WORKER) {
    return `has no effect per flow: worker settings are read per target cluster, set ${target}.${rest}${isPassedToWorkers(rest) ? ` (or ${rest} at top level)` : ''}`
  }
  return `has no effect on clients per flow: set ${source}.${rest} / ${target}.${rest} for the clusters, or ${source}->${target}.source.cluster.${rest} / ${source}->${target}.target.cluster.${rest}`
}

function clusterWarnings (key: string, rest: string, alias: string, value: string, shown: Quoted, aliases: readonly string[]): ConfigWarning[] {
  if (rest.startsWith('config.providers')) return [{ key, message: providersAtTopLevelOnly(rest) }]
  const usage = clusterRestUsage(rest)
  const security = unknownSecurityKey(rest)
  if (security !== undefined) {
    return [{ key, message: `is not a Kafka client setting, so no client of cluster ${alias} reads it${didYouMean(security.suggestion === undefined ? undefined : `${alias}.${security.suggestion}`)}` }]
  }
  const spec = findKey(rest)
  if (spec?.scope === Scopes.CLIENT_ROLE) {
    return [{ key, message: `is not read by any client: client settings are read per client role, set ${alias}.${spec.roles?.[0] ?? 'consumer'}.${rest}` }]
  }
  if (usage === Usages.UNKNOWN) {
    const suggestion = closest(rest, candidateNames('cluster'))
    const hint = suggestion === undefined ? '' : ` (did you mean ${alias}.${suggestion}?)`
    return [{ key, message: `is not a cluster setting kmirror uses (in MM2 it would only reach the Connect worker of flows into ${alias}), so it is ignored${hint}` }]
  }
  if (usage === Usages.DROPPED) {
    const other = aliases.find(x => x !== alias) ?? 'B'
    if (spec?.perFlowOnly === true) return [{ key, message: `is read as a property of cluster ${alias}, which kmirror does not use for ${rest}: set it per flow, e.g. ${other}->${alias}.${rest}` }]
    return [{ key, message: `is read as a property of cluster ${alias}, which MM2 does not use as a connector setting: set ${alias}->${other}.${rest} for one flow, or ${rest} at top level for all` }]
  }
  return specWarnings(key, findKey(rest) ?? clientSpec(rest), value, shown)
}

/** MM2 builds its config providers from the top-level `config.providers*` keys only. */
function providersAtTopLevelOnly (rest: string): string {
  return `has no effect: config providers are declared at top level only (MM2 resolves every reference with the top-level declarations): write ${rest} without the prefix`
}

/**
 * `A->B.source.cluster.bootstrap.servers` only reaches the clients when cluster A has no such key: otherwise
 * clusterProps(A) has already copied A's value into `source.consumer.*` etc., which MM2 applies later.
 */
function shadowedWarnings (key: string, rest: string, source: string, target: string, values: Props): ConfigWarning[] {
  const match = /^(source|target)\.cluster\.(.+)$/.exec(rest)
  const [, side = '', clientKey = ''] = match ?? []
  if (match === null || !isConnectionKey(clientKey)) return []
  const alias = side === 'source' ? source : target
  if (values[`${alias}.${clientKey}`] === undefined && values[clientKey] === undefined) return []
  const roles = ['consumer', 'producer', 'admin'].map(role => `${source}->${target}.${side}.${role}.${clientKey}`).join(', ')
  return [{ key, message: `does not reach the clients, because MM2 has already copied ${alias}'s ${clientKey} into each client role, and those win: set ${roles} instead` }]
}

/** Keys kmirror accepts but does not use, renamed keys, and lenient enums. */
function specWarnings (key: string, spec: KeySpec | undefined, value: string, shown: Quoted): ConfigWarning[] {
  if (spec === undefined) return []
  if (spec.ignored !== undefined && !isDefault(spec, value)) return [{ key, message: `kmirror ignores it: ${spec.ignored}` }]
  if (spec.renamedTo !== undefined) {
    return [{ key, message: `was renamed to ${spec.renamedTo} (MM2 4.0 no longer reads ${spec.name}); kmirror still reads it where ${spec.renamedTo} is not set: rename it` }]
  }
  const values = spec.values ?? []
  if (spec.otherValuesMean !== undefined && !values.includes(javaTrim(value))) {
    return [{ key, message: `${shown.text} is not one of ${values.join(', ')}, so it means ${spec.otherValuesMean} (as in MM2): write ${spec.otherValuesMean} to say so` }]
  }
  return []
}

function isDefault (spec: KeySpec, value: string): boolean {
  if (spec.default === null) return false
  return splitList(value).join(',') === splitList(spec.default).join(',')
}

/** kmirror reads read_committed unless told otherwise; read_uncommitted copies aborted records too. */
function isolationWarnings (key: string, value: string, rest: string): ConfigWarning[] {
  const client = clientKeyOf(rest)
  if (client?.key !== 'isolation.level' || !client.prefix.includes('consumer')) return []
  if (javaTrim(value).toLowerCase() !== 'read_uncommitted') return []
  return [{ key, message: 'read_uncommitted makes kmirror copy records of aborted and still-open transactions as if they were committed (kmirror reads read_committed by default): remove the key unless that is what you want' }]
}

/** `key = value # note`: Java keeps `# note` in the value (mm2-spec §1.1), so a topic regex silently stops matching. */
function inlineCommentWarnings (key: string, value: string, shown: Quoted, aliases: readonly string[]): ConfigWarning[] {
  if (!/\s#/.test(value) || key.endsWith('sasl.jaas.config')) return []
  const quoted = shown.hidden ? shown.text : `its value ${JSON.stringify(redactValue(key, value, aliases))}`
  return [{ key, message: `${quoted} contains " #", which is part of the value, not a comment (.properties files have no inline comments): move the comment to its own line` }]
}
