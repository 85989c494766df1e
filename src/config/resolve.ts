/**
 * MM2's resolution of mm2.properties into the configs of one flow S->T, reproduced literally
 * (mm2-spec §1.1 `clusterProps`, connector config steps 1-7, worker config; §1.8 client configs).
 * Literal means: prefixes are matched as plain string prefixes, exactly where MM2 matches them, even where
 * that looks odd (a cluster key `consumerX` counts as a consumer key, top-level `offset.storage.*` beats
 * `T.offset.storage.*`). Diagnostics about such surprises live in warnings.ts, not here.
 */
import { findKey, JAVA_SECURITY_KEYS, Scopes } from './schema.ts'
import { WORKER_TOP_LEVEL_PREFIXES } from './key-shapes.ts'
import { newProps, putAll, putIfAbsent, stripPrefix } from './values.ts'

type Props = Readonly<Record<string, string>>

const MIRROR_SOURCE_CONNECTOR = 'MirrorSourceConnector'
const CONNECTOR_CLASS = `org.apache.kafka.connect.mirror.${MIRROR_SOURCE_CONNECTOR}`

/** `MirrorClientConfig.CLIENT_CONFIG_DEF`: the keys copied between clusters and client roles (a misspelt `sasl.*` key is not). */
export function isConnectionKey (key: string): boolean {
  return key === 'bootstrap.servers' || key === 'security.protocol' || JAVA_SECURITY_KEYS.has(key)
}

/** The top-level filter: the union of the three connectors' ConfigDefs (mm2-spec §1.1). */
export function isConnectorConfigName (key: string): boolean {
  const spec = findKey(key)
  if (spec !== undefined) {
    if (spec.scope === Scopes.CONNECTOR) return spec.perFlowOnly !== true
    return spec.scope === Scopes.CLUSTER && key !== 'bootstrap.servers'
  }
  return JAVA_SECURITY_KEYS.has(key)
}

/** `clusterProps(X)`: X's own keys, then its connection keys copied into each role, then top-level ones. */
export function clusterProps (raw: Props, alias: string): Record<string, string> {
  const props = stripPrefix(raw, `${alias}.`)
  for (const [key, value] of Object.entries(props)) {
    if (isConnectionKey(key)) copyIntoRoles(props, key, value)
  }
  for (const [key, value] of Object.entries(raw)) {
    if (!isConnectionKey(key)) continue
    copyIntoRoles(props, key, value)
    putIfAbsent(props, key, value)
  }
  return props
}

function copyIntoRoles (props: Record<string, string>, key: string, value: string): void {
  putIfAbsent(props, `producer.${key}`, value)
  putIfAbsent(props, `consumer.${key}`, value)
  putIfAbsent(props, `admin.${key}`, value)
}

/** The MirrorSourceConnector config of flow S->T, steps 1 to 7. */
export function connectorConfig (raw: Props, source: string, target: string): Record<string, string> {
  const props = newProps()
  for (const [key, value] of Object.entries(raw)) {
    if (isConnectorConfigName(key)) props[key] = value
  }
  putAll(props, withPrefixes(raw, ['config.providers', 'replication.policy']))
  putAll(props, sideProps(clusterProps(raw, source), 'source'))
  putAll(props, sideProps(clusterProps(raw, target), 'target'))
  putIfAbsent(props, 'name', MIRROR_SOURCE_CONNECTOR)
  putIfAbsent(props, 'connector.class', CONNECTOR_CLASS)
  putIfAbsent(props, 'source.cluster.alias', source)
  putIfAbsent(props, 'target.cluster.alias', target)
  putAll(props, stripPrefix(raw, `${source}->${target}.`))
  putIfAbsent(props, 'enabled', 'false')
  return props
}

/**
 * Steps 3 and 4: MM2 tests `^consumer.*|^producer.*|^admin.*` without a dot, so these become
 * `source.<k>`; everything else becomes `source.cluster.<k>`.
 */
function sideProps (cluster: Props, side: 'source' | 'target'): Record<string, string> {
  const props = newProps()
  for (const [key, value] of Object.entries(cluster)) {
    const isClientKey = key.startsWith('consumer') || key.startsWith('producer') || key.startsWith('admin')
    props[isClientKey ? `${side}.${key}` : `${side}.cluster.${key}`] = value
  }
  return props
}

/** `stringsWithPrefix`: the top-level keys starting with any of the prefixes, unchanged. */
function withPrefixes (raw: Props, prefixes: readonly string[]): Record<string, string> {
  const props = newProps()
  for (const [key, value] of Object.entries(raw)) {
    if (prefixes.some(prefix => key.startsWith(prefix))) props[key] = value
  }
  return props
}

/**
 * The Connect worker config of the herder for S->T: the target's cluster properties, then the top-level
 * prefixes passed to every worker (which therefore win over `T.<k>`), then MM2's defaults.
 * `${provider:path:key}` references have already been resolved (providers.ts), as MM2's `transform` does here.
 */
export function workerConfig (raw: Props, source: string, target: string): Record<string, string> {
  const props = clusterProps(raw, target)
  putAll(props, withPrefixes(raw, WORKER_TOP_LEVEL_PREFIXES))
  putAll(props, withPrefixes(raw, ['config.providers']))
  putIfAbsent(props, 'client.id', `${source}->${target}`)
  putIfAbsent(props, 'group.id', `${source}-mm2`)
  putIfAbsent(props, 'offset.storage.topic', `mm2-offsets.${source}.internal`)
  putIfAbsent(props, 'status.storage.topic', `mm2-status.${source}.internal`)
  putIfAbsent(props, 'config.storage.topic', `mm2-configs.${source}.internal`)
  for (const converter of ['key.converter', 'value.converter', 'header.converter']) {
    putIfAbsent(props, converter, 'org.apache.kafka.connect.converters.ByteArrayConverter')
  }
  return props
}

export const ClientRoles = { CONSUMER: 'consumer', PRODUCER: 'producer', ADMIN: 'admin' } as const
export type ClientRole = (typeof ClientRoles)[keyof typeof ClientRoles]
export type Side = 'source' | 'target'

/**
 * The Java client properties of one role on one side (mm2-spec §1.8): `<side>.cluster.*` connection keys,
 * then `<role>.*`, then `<side>.<role>.*`; later wins.
 * Consumers get MM2's forced `enable.auto.commit=false` and `auto.offset.reset=earliest` if absent, plus
 * kmirror's `isolation.level=read_committed` if absent (MM2 inherits the client's read_uncommitted).
 * The target producer is also kmirror's replicated-data producer, so the flow's `producer.override.*`
 * (Connect's per-connector producer overrides) are applied last.
 */
export function roleClientProps (connector: Props, side: Side, role: ClientRole): Record<string, string> {
  const props = newProps()
  for (const [key, value] of Object.entries(stripPrefix(connector, `${side}.cluster.`))) {
    if (isConnectionKey(key)) props[key] = value
  }
  for (const [key, value] of Object.entries(stripPrefix(connector, `${role}.`))) {
    // `producer.override.x` is a Connect override, not a producer key named `override.x`.
    if (!key.startsWith('override.')) props[key] = value
  }
  putAll(props, stripPrefix(connector, `${side}.${role}.`))
  if (role === ClientRoles.CONSUMER) {
    props['enable.auto.commit'] = 'false'
    putIfAbsent(props, 'auto.offset.reset', 'earliest')
    putIfAbsent(props, 'isolation.level', 'read_committed')
  }
  if (role === ClientRoles.PRODUCER && side === 'target') putAll(props, stripPrefix(connector, 'producer.override.'))
  return props
}
