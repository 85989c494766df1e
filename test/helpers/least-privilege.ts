/**
 * The least-privilege ACLs of kmirror, per cluster and feature: the one table that docs/operations.md lists
 * (a unit test compares them) and that test/integration/least-privilege.test.ts grants to a non-super user.
 * Names use placeholders: `<source>` and `<target>` (cluster aliases), `<topics>` (the replicated topics, here a
 * prefix), `<groups>` (the groups whose offsets are translated, here a prefix).
 */
import type { AclBinding } from '../../src/kafka/acls.ts'

export type LeastPrivilegeCluster = 'source' | 'target'

export interface LeastPrivilegeAcl {
  readonly cluster: LeastPrivilegeCluster
  readonly feature: string
  readonly resourceType: AclBinding['resourceType']
  /** With placeholders. */
  readonly name: string
  readonly patternType: AclBinding['patternType']
  readonly operations: readonly AclBinding['operation'][]
}

export const LEAST_PRIVILEGE_ACLS: readonly LeastPrivilegeAcl[] = [
  // READ and WRITE imply DESCRIBE in Kafka's authorizer: DESCRIBE is listed only where neither is needed.
  { cluster: 'source', feature: 'data replication', resourceType: 'topic', name: '<topics>', patternType: 'prefixed', operations: ['read', 'describe-configs'] },
  { cluster: 'target', feature: 'data replication', resourceType: 'topic', name: '<source>.<topics>', patternType: 'prefixed', operations: ['create', 'write'] },
  { cluster: 'target', feature: 'data replication', resourceType: 'topic', name: 'mm2-offsets.<source>.internal', patternType: 'literal', operations: ['create', 'write', 'read'] },
  { cluster: 'target', feature: 'data replication', resourceType: 'topic', name: 'mm2-offset-history.<source>.internal', patternType: 'literal', operations: ['create', 'write', 'read'] },
  { cluster: 'source', feature: 'offset syncs', resourceType: 'topic', name: 'mm2-offset-syncs.<target>.internal', patternType: 'literal', operations: ['create', 'write'] },
  { cluster: 'target', feature: 'topic creation and config sync', resourceType: 'topic', name: '<source>.<topics>', patternType: 'prefixed', operations: ['describe-configs', 'alter-configs', 'alter'] },
  { cluster: 'source', feature: 'ACL sync', resourceType: 'cluster', name: 'kafka-cluster', patternType: 'literal', operations: ['describe'] },
  { cluster: 'target', feature: 'ACL sync', resourceType: 'cluster', name: 'kafka-cluster', patternType: 'literal', operations: ['describe', 'alter'] },
  { cluster: 'target', feature: 'ACL sync', resourceType: 'topic', name: 'mm2-acls.<source>.internal', patternType: 'literal', operations: ['create', 'write', 'read'] },
  { cluster: 'source', feature: 'checkpoints', resourceType: 'group', name: '<groups>', patternType: 'prefixed', operations: ['describe'] },
  { cluster: 'target', feature: 'checkpoints', resourceType: 'topic', name: '<source>.checkpoints.internal', patternType: 'literal', operations: ['create', 'write', 'read'] },
  { cluster: 'target', feature: 'group offset sync', resourceType: 'group', name: '<groups>', patternType: 'prefixed', operations: ['read'] },
  { cluster: 'target', feature: 'group offset sync', resourceType: 'topic', name: '<source>.<topics>', patternType: 'prefixed', operations: ['read'] },
  // MM2 emits heartbeats for every pair of clusters, also the disabled <target>-><source> one; the source's
  // heartbeats topic is replicated (heartbeats.replication.enabled) like any topic
  { cluster: 'target', feature: 'heartbeats', resourceType: 'topic', name: 'heartbeats', patternType: 'literal', operations: ['create', 'write'] },
  { cluster: 'source', feature: 'heartbeats', resourceType: 'topic', name: 'heartbeats', patternType: 'literal', operations: ['create', 'write', 'read', 'describe-configs'] },
  { cluster: 'target', feature: 'heartbeats', resourceType: 'topic', name: '<source>.heartbeats', patternType: 'literal', operations: ['create', 'write', 'describe-configs', 'alter-configs', 'alter'] },
  // Several instances share a flow through its group on the target; the disabled reverse pair's heartbeats through
  // the pair's own group on the source
  { cluster: 'target', feature: 'group membership', resourceType: 'group', name: 'kmirror-<source>-<target>', patternType: 'literal', operations: ['read'] },
  { cluster: 'source', feature: 'group membership', resourceType: 'group', name: 'kmirror-<target>-<source>', patternType: 'literal', operations: ['read'] },
  { cluster: 'target', feature: 'topic deletion sync', resourceType: 'topic', name: '<source>.<topics>', patternType: 'prefixed', operations: ['delete'] },
  // Exactly-once mode only: its transactional ids are `<group id>-<member name>` (WRITE: InitProducerId, Produce,
  // EndTxn; it implies the DESCRIBE of ListTransactions and DescribeTransactions when a dead instance's open
  // transaction is looked for); DESCRIBE on the groups `<group id>-...` tells a dead member's id from another
  // group's when host names have dashes (orphan-transactions.ts)
  { cluster: 'target', feature: 'exactly-once', resourceType: 'transactional-id', name: 'kmirror-<source>-<target>-', patternType: 'prefixed', operations: ['write'] },
  { cluster: 'target', feature: 'exactly-once', resourceType: 'group', name: 'kmirror-<source>-<target>-', patternType: 'prefixed', operations: ['describe'] },
  // status and plan need nothing beyond the rows above; failover, failback and offsets set need these too
  { cluster: 'target', feature: 'commands', resourceType: 'topic', name: '<source>.checkpoints.internal', patternType: 'literal', operations: ['read'] },
  { cluster: 'source', feature: 'commands', resourceType: 'group', name: '<groups>', patternType: 'prefixed', operations: ['read'] }
]

export interface Placeholders {
  readonly source: string
  readonly target: string
  readonly topics: string
  readonly groups: string
}

export function fillPlaceholders (name: string, p: Placeholders): string {
  return name.replaceAll('<source>', p.source).replaceAll('<target>', p.target).replaceAll('<topics>', p.topics).replaceAll('<groups>', p.groups)
}

/** The bindings of CLUSTER for PRINCIPAL, without the rows `leaveOut` returns true for. */
export function leastPrivilegeBindings (cluster: LeastPrivilegeCluster, principal: string, p: Placeholders, leaveOut: (row: LeastPrivilegeAcl, operation: AclBinding['operation']) => boolean = () => false): AclBinding[] {
  return LEAST_PRIVILEGE_ACLS.filter(r => r.cluster === cluster).flatMap(r => r.operations.filter(op => !leaveOut(r, op)).map(operation => ({
    resourceType: r.resourceType, resourceName: fillPlaceholders(r.name, p), patternType: r.patternType, principal, host: '*', operation, permission: 'allow' as const
  })))
}

/** A row as docs/operations.md lists it: `| source | data replication | topic | \`<topics>\` | prefixed | READ, DESCRIBE_CONFIGS |`. */
export function formatLeastPrivilegeRow (r: LeastPrivilegeAcl): string {
  const ops = r.operations.map(op => op.toUpperCase().replaceAll('-', '_')).join(', ')
  return `| ${r.cluster} | ${r.feature} | ${r.resourceType} | \`${r.name}\` | ${r.patternType} | ${ops} |`
}
