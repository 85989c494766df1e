/**
 * ACL bindings in kmirror's own words, and their translation to and from the Kafka library's numeric enums.
 * The engine works with these strings only; this file is the only one that knows the numbers.
 */
import { AclOperations, AclPermissionTypes, ResourcePatternTypes, ResourceTypes, type Acl } from '@platformatic/kafka'

export const AclResourceTypes = { TOPIC: 'topic', GROUP: 'group', CLUSTER: 'cluster', TRANSACTIONAL_ID: 'transactional-id' } as const
export type AclResourceType = (typeof AclResourceTypes)[keyof typeof AclResourceTypes]

export const AclPatternTypes = { LITERAL: 'literal', PREFIXED: 'prefixed' } as const
export type AclPatternType = (typeof AclPatternTypes)[keyof typeof AclPatternTypes]

export const AclOps = {
  ALL: 'all', READ: 'read', WRITE: 'write', CREATE: 'create', DELETE: 'delete', ALTER: 'alter', DESCRIBE: 'describe',
  CLUSTER_ACTION: 'cluster-action', DESCRIBE_CONFIGS: 'describe-configs', ALTER_CONFIGS: 'alter-configs', IDEMPOTENT_WRITE: 'idempotent-write'
} as const
export type AclOp = (typeof AclOps)[keyof typeof AclOps]

export type AclPermission = 'allow' | 'deny'

export interface AclBinding {
  readonly resourceType: AclResourceType
  readonly resourceName: string
  readonly patternType: AclPatternType
  readonly principal: string
  readonly host: string
  readonly operation: AclOp
  readonly permission: AclPermission
}

const RESOURCE_TYPES: Record<AclResourceType, number> = {
  topic: ResourceTypes.TOPIC, group: ResourceTypes.GROUP, cluster: ResourceTypes.CLUSTER, 'transactional-id': ResourceTypes.TRANSACTIONAL_ID
}
const PATTERN_TYPES: Record<AclPatternType, number> = { literal: ResourcePatternTypes.LITERAL, prefixed: ResourcePatternTypes.PREFIXED }
const OPERATIONS: Record<AclOp, number> = {
  all: AclOperations.ALL,
  read: AclOperations.READ,
  write: AclOperations.WRITE,
  create: AclOperations.CREATE,
  delete: AclOperations.DELETE,
  alter: AclOperations.ALTER,
  describe: AclOperations.DESCRIBE,
  'cluster-action': AclOperations.CLUSTER_ACTION,
  'describe-configs': AclOperations.DESCRIBE_CONFIGS,
  'alter-configs': AclOperations.ALTER_CONFIGS,
  'idempotent-write': AclOperations.IDEMPOTENT_WRITE
}

function reverse<K extends string> (table: Record<K, number>): Map<number, K> {
  return new Map(Object.entries(table).map(([k, v]) => [v as number, k as K]))
}
const RESOURCE_BY_NUMBER = reverse(RESOURCE_TYPES)
const PATTERN_BY_NUMBER = reverse(PATTERN_TYPES)
const OPERATION_BY_NUMBER = reverse(OPERATIONS)

export function toLibraryAcl (b: AclBinding): Acl {
  return {
    resourceType: RESOURCE_TYPES[b.resourceType] as Acl['resourceType'],
    resourceName: b.resourceName,
    resourcePatternType: PATTERN_TYPES[b.patternType] as Acl['resourcePatternType'],
    principal: b.principal,
    host: b.host,
    operation: OPERATIONS[b.operation] as Acl['operation'],
    permissionType: (b.permission === 'allow' ? AclPermissionTypes.ALLOW : AclPermissionTypes.DENY) as Acl['permissionType']
  }
}

/** Undefined for bindings kmirror has no words for (unknown resource types, operations or patterns). */
export function fromLibraryAcl (a: Acl): AclBinding | undefined {
  const resourceType = RESOURCE_BY_NUMBER.get(a.resourceType)
  const patternType = PATTERN_BY_NUMBER.get(a.resourcePatternType)
  const operation = OPERATION_BY_NUMBER.get(a.operation)
  const permission = a.permissionType === AclPermissionTypes.ALLOW ? 'allow' : a.permissionType === AclPermissionTypes.DENY ? 'deny' : undefined
  if (resourceType === undefined || patternType === undefined || operation === undefined || permission === undefined) return undefined
  return { resourceType, resourceName: a.resourceName, patternType, principal: a.principal, host: a.host, operation, permission }
}

/** A stable identity of a binding, to compare sets of bindings. */
export function aclKey (b: AclBinding): string {
  return [b.resourceType, b.patternType, b.resourceName, b.principal, b.host, b.operation, b.permission].join('\u0000')
}
