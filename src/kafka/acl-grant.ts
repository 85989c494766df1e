/**
 * The ACL a refused request needs, named in full: operation, resource, principal and cluster, with the
 * kafka-acls.sh line that grants it. Used where kmirror knows what it asked for (writes of its internal records,
 * topic creation, growth, config changes and deletion); the operations are those of docs/operations.md
 * "Least-privilege ACLs".
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { principalArg, shellWord, toolCommand, type ToolCluster } from './tool-command.ts'

export interface AclGrant {
  /** Kafka's operation name, upper case with underscores: `WRITE`, `CREATE`. */
  readonly operation: string
  readonly resourceType: 'topic' | 'group' | 'cluster' | 'transactional-id'
  readonly names: readonly string[]
  /** A prefixed ACL: `names` are prefixes (one grant covers every resource whose name starts so). */
  readonly prefixed?: boolean
}

/** `grant WRITE on topic A.checkpoints.internal to User:bob on cluster B (kafka-acls.sh --bootstrap-server ... --add ...)`. */
export function describeGrant (grant: AclGrant, principal: string, cluster: ToolCluster): string {
  const names = [...new Set(grant.names)].sort()
  // A principal kmirror could not name is described as `the principal ... on cluster A` already.
  const on = cluster.alias === undefined || principal.endsWith(`on cluster ${cluster.alias}`) ? '' : ` on cluster ${cluster.alias}`
  const pattern = grant.prefixed === true ? ' --resource-pattern-type prefixed' : ''
  const option = grant.resourceType === 'cluster' ? '--cluster' : `${names.map(n => `--${grant.resourceType} ${shellWord(n)}`).join(' ')}${pattern}`
  const who = principalArg(principal, cluster)
  const operation = grant.operation.toLowerCase().split('_').map(w => w[0]!.toUpperCase() + w.slice(1)).join('')
  const what = grant.prefixed === true ? `${grant.resourceType}s prefixed` : grant.resourceType
  return `grant ${grant.operation} on ${what} ${names.join(', ')} to ${principal}${on} ` +
    `(${toolCommand('kafka-acls.sh', cluster, `--add --allow-principal ${who} --operation ${operation} ${option}`)}; see "Least-privilege ACLs" in docs/operations.md)`
}

/** ERR with the grant that fixes it when it is an authorization refusal; any other error unchanged. */
export function withGrant (err: KmirrorError, action: string, grant: AclGrant, principal: string, cluster: ToolCluster): KmirrorError {
  if (err.code !== ErrorCodes.NOT_AUTHORIZED) return err
  const names = err.details['kafkaErrors']
  const kafka = Array.isArray(names) && names.length > 0 ? ` (${names.join(', ')})` : ''
  return new KmirrorError(ErrorCodes.NOT_AUTHORIZED, `${action} was refused${kafka}: ${describeGrant(grant, principal, cluster)}`, {
    cause: err, retriable: err.retriable, details: err.details
  })
}
