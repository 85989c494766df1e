/**
 * What a key as written in mm2.properties is: a per-flow key `A->B.k`, a cluster key `A.k`, or a top-level key,
 * and, for each of those, whether MM2 uses it, drops it, or does not know it.
 * Resolution (resolve.ts) never uses this: it follows MM2's literal prefix rules. This is for diagnostics.
 */
import { findKey, JAVA_SECURITY_KEYS, KEYS, Scopes, type KeySpec } from './schema.ts'
import { closest } from './suggest.ts'

export type KeyShape =
  | { readonly kind: 'flow', readonly source: string, readonly target: string, readonly rest: string }
  | { readonly kind: 'unknown-flow', readonly source: string, readonly target: string, readonly rest: string }
  | { readonly kind: 'cluster', readonly alias: string, readonly rest: string }
  | { readonly kind: 'unknown-cluster', readonly alias: string, readonly rest: string }
  | { readonly kind: 'top-level' }

/** Top-level prefixes MM2 passes to every worker (mm2-spec §1.1 "Worker config", step 2). */
export const WORKER_TOP_LEVEL_PREFIXES = [
  'offset.storage', 'config.storage', 'status.storage', 'key.converter', 'value.converter', 'header.converter',
  'task', 'worker', 'replication.policy'
] as const

/** The connector-config prefixes under which client settings live (mm2-spec §1.3, §1.8). */
const CLIENT_PREFIXES = [
  'source.cluster.', 'target.cluster.',
  'source.consumer.', 'source.producer.', 'source.admin.', 'target.consumer.', 'target.producer.', 'target.admin.',
  'producer.override.', 'consumer.', 'producer.', 'admin.'
] as const

const ROLE_PREFIXES = ['consumer.', 'producer.', 'admin.'] as const
const PER_FLOW_PREFIXES = [...CLIENT_PREFIXES, 'ssl.', 'sasl.', 'transforms.', 'predicates.', 'topic.creation.', 'replication.policy.', 'config.providers.']

/**
 * First segments of keys that are not aliases, so `topics.x` is not read as "unknown cluster topics".
 * Besides those of the schema: common Kafka client and Connect worker key prefixes (`metrics.*`, `plugin.path`),
 * which get an "unknown key" warning rather than an "unknown alias" error.
 */
const EXTRA_FIRST_SEGMENTS = [
  'producer', 'admin', 'task', 'worker', 'client', 'plugin', 'metrics', 'auto', 'request', 'retry', 'reconnect',
  'connections', 'socket', 'send', 'receive', 'session', 'heartbeat', 'rebalance', 'scheduled', 'inter', 'max',
  'fetch', 'isolation', 'enable', 'linger', 'batch', 'buffer', 'compression', 'acks', 'delivery', 'partitioner',
  'internal', 'kafka', 'log'
]

export function classifyKey (key: string, aliases: readonly string[]): KeyShape {
  const flow = matchFlow(key, aliases)
  if (flow !== undefined) return flow
  const alias = longestAliasPrefix(key, aliases)
  if (alias !== undefined) return { kind: 'cluster', alias, rest: key.slice(alias.length + 1) }
  const dot = key.indexOf('.')
  if (dot > 0 && looksLikeUnknownAlias(key, key.slice(0, dot), key.slice(dot + 1))) {
    return { kind: 'unknown-cluster', alias: key.slice(0, dot), rest: key.slice(dot + 1) }
  }
  return { kind: 'top-level' }
}

/**
 * `C.bootstrap.servers` names an unknown cluster C; `tpoics.exclude` is a misspelt key. So: the first segment
 * must not start any known key, and either the rest is a cluster setting or no known key is close to the whole.
 */
function looksLikeUnknownAlias (key: string, first: string, rest: string): boolean {
  if (isKnownFirstSegment(first)) return false
  return findKey(rest) !== undefined || clusterRestUsage(rest) !== Usages.UNKNOWN || closest(key, allKeyNames()) === undefined
}

function matchFlow (key: string, aliases: readonly string[]): KeyShape | undefined {
  const arrow = key.indexOf('->')
  if (arrow <= 0) return undefined
  const source = key.slice(0, arrow)
  const after = key.slice(arrow + 2)
  const target = aliases.includes(source) ? longestAliasPrefix(after, aliases) : undefined
  if (target !== undefined) return { kind: 'flow', source, target, rest: after.slice(target.length + 1) }
  const dot = after.indexOf('.')
  if (dot <= 0) return undefined
  return { kind: 'unknown-flow', source, target: after.slice(0, dot), rest: after.slice(dot + 1) }
}

/** The longest alias `a` such that `key` starts with `a.` (aliases may themselves contain dots). */
function longestAliasPrefix (key: string, aliases: readonly string[]): string | undefined {
  let best: string | undefined
  for (const alias of aliases) {
    if (alias !== '' && key.startsWith(`${alias}.`) && (best === undefined || alias.length > best.length)) best = alias
  }
  return best
}

let firstSegments: ReadonlySet<string> | undefined
function isKnownFirstSegment (segment: string): boolean {
  firstSegments ??= new Set([...allKeyNames().map(name => name.split('.')[0] ?? name), ...EXTRA_FIRST_SEGMENTS])
  return firstSegments.has(segment)
}

function allKeyNames (): string[] {
  return knownNames(() => true)
}

function knownNames (keep: (spec: KeySpec) => boolean): string[] {
  return KEYS.filter(keep).map(spec => spec.name)
}

/** Whether MM2 (and kmirror) reads a key written at top level, drops it, or does not know it. */
export const Usages = { USED: 'used', DROPPED: 'dropped', UNKNOWN: 'unknown' } as const
export type Usage = (typeof Usages)[keyof typeof Usages]

export function topLevelUsage (key: string): Usage {
  const spec = findKey(key)
  if (spec !== undefined) return isUsedAtTopLevel(spec) ? Usages.USED : Usages.DROPPED
  if (isSecurityKeyShape(key)) return JAVA_SECURITY_KEYS.has(key) ? Usages.USED : Usages.UNKNOWN
  if (key.startsWith('config.providers.')) return Usages.USED
  if (WORKER_TOP_LEVEL_PREFIXES.some(prefix => key.startsWith(prefix))) return Usages.USED
  if (CLIENT_PREFIXES.some(prefix => key.startsWith(prefix))) return Usages.DROPPED
  return Usages.UNKNOWN
}

function isUsedAtTopLevel (spec: KeySpec): boolean {
  if (spec.scope === Scopes.CLIENT_ROLE) return false
  if (spec.scope === Scopes.WORKER) return spec.topLevelExtension === true || isPassedToWorkers(spec.name)
  return spec.perFlowOnly !== true
}

export function isPassedToWorkers (key: string): boolean {
  return WORKER_TOP_LEVEL_PREFIXES.some(prefix => key.startsWith(prefix))
}

/** Per-flow keys are copied unfiltered into the connector config; "unknown" means MM2 has no use for them. */
export function flowRestUsage (rest: string): Usage {
  const spec = findKey(rest)
  if (spec !== undefined) return spec.scope === Scopes.CONNECTOR ? Usages.USED : Usages.DROPPED
  if (unknownSecurityKey(rest) !== undefined) return Usages.UNKNOWN
  return PER_FLOW_PREFIXES.some(prefix => rest.startsWith(prefix)) ? Usages.USED : Usages.UNKNOWN
}

/** `A.<rest>`: connection and security, role-prefixed client settings, or Connect worker settings. */
export function clusterRestUsage (rest: string): Usage {
  const spec = findKey(rest)
  if (spec !== undefined) return spec.scope === Scopes.CLUSTER || spec.scope === Scopes.WORKER ? Usages.USED : Usages.DROPPED
  if (unknownSecurityKey(rest) !== undefined) return Usages.UNKNOWN
  if (isSecurityKeyShape(rest)) return Usages.USED
  return ROLE_PREFIXES.some(prefix => rest.startsWith(prefix)) ? Usages.USED : Usages.UNKNOWN
}

function isSecurityKeyShape (key: string): boolean {
  return key.startsWith('ssl.') || key.startsWith('sasl.')
}

/**
 * An `ssl.*` or `sasl.*` key the Java client does not have, alone or under a client prefix (`sasl.jaas.confg`,
 * `consumer.ssl.keystore.pasword`), with the closest key it has under the same prefix. Such keys are usually
 * misspelt secrets: MM2 passes them to no client.
 */
export function unknownSecurityKey (rest: string): { readonly suggestion: string | undefined } | undefined {
  const client = clientKeyOf(rest)
  const prefix = client?.prefix ?? ''
  const key = client?.key ?? rest
  if (!isSecurityKeyShape(key) || JAVA_SECURITY_KEYS.has(key)) return undefined
  const near = closest(key, JAVA_SECURITY_KEYS)
  return { suggestion: near === undefined ? undefined : `${prefix}${near}` }
}

/** The client key under a client prefix of a connector or cluster key: `source.consumer.x` → `x`. */
export function clientKeyOf (rest: string): { prefix: string, key: string } | undefined {
  const prefix = CLIENT_PREFIXES.find(p => rest.startsWith(p))
  return prefix === undefined ? undefined : { prefix, key: rest.slice(prefix.length) }
}

/** Names a did-you-mean may suggest for a key written at top level, per flow, or per cluster. */
export function candidateNames (kind: 'top-level' | 'flow' | 'cluster'): string[] {
  if (kind === 'flow') return knownNames(spec => spec.scope === Scopes.CONNECTOR)
  if (kind === 'cluster') return knownNames(spec => spec.scope === Scopes.CLUSTER || spec.scope === Scopes.WORKER)
  return allKeyNames()
}
