/**
 * Which ALLOW bindings kmirror must not copy because a source DENY narrows them and that DENY cannot be copied
 * whole. Pure: no I/O.
 *
 * Kafka's authorizer denies a request when any DENY matches it (same principal or `User:*`, same host or `*`,
 * same operation or ALL, and a resource pattern covering the resource), whatever the ALLOWs say. An ALLOW also
 * grants its implied operations (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
 * DESCRIBE_CONFIGS); a DENY denies only its own operation (or every one for ALL).
 *
 * A DENY that kmirror copies whole narrows the copied ALLOWs on the target as on the source. Some DENYs are not
 * copied, or only their READ part (acl-rules.ts): a DENY that would apply to kmirror's own principal on the target
 * (that principal, or `User:*`), and a prefix or wildcard the replication policy cannot map. Copying the ALLOWs
 * such a DENY narrows would grant on the target what the source refuses (the tester's case: `DENY DESCRIBE User:*`
 * on `orders`, `ALLOW READ User:bob` on `orders`: bob cannot use `orders` on the source but would read `A.orders`
 * on the target). So kmirror does not copy those ALLOWs, and says which DENY is why.
 *
 * The overlap test is conservative (it may drop an ALLOW that is narrowed only for some hosts or some topics
 * under a prefix), never generous: a dropped ALLOW only ever narrows access on the target.
 */
import type { AclBinding, AclOp } from '../kafka/acls.ts'
import { AclSkipReasons, patternsOverlap, type AclSkipReason, type AclTranslation } from './acl-rules.ts'

/** The part of a source DENY that does not reach the target: its operations (ALL stands for every one). */
export interface UncopiedDeny {
  readonly binding: AclBinding
  readonly operations: ReadonlySet<AclOp>
}

const WILDCARD = '*'
const WILDCARD_PRINCIPAL = 'User:*'
const EVERY_OPERATION: ReadonlySet<AclOp> = new Set(['all'])

/**
 * Skip reasons under which a DENY still covers something kmirror copies. Not here: a literal DENY of a topic
 * the flow does not replicate (the plan copies it when a copied ALLOW covers its remote name: acl-sync.ts
 * `coveredDenies`), an invalid name (covers nothing), a resource type kmirror does not sync, group ACLs turned
 * off (no group ALLOW is copied).
 */
const NARROWING_SKIPS: ReadonlySet<AclSkipReason> = new Set([
  AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR,
  AclSkipReasons.GROUP_DENY_WOULD_BLOCK_KMIRROR,
  AclSkipReasons.PREFIX_NOT_REPLICATED,
  AclSkipReasons.PREFIX_NOT_MAPPABLE,
  AclSkipReasons.WILDCARD_NOT_MAPPABLE,
  AclSkipReasons.GROUP_NOT_SYNCED
])

/** What the target would get of ALLOW operation OP, counting the operations Kafka implies from it. */
const IMPLIED: Partial<Record<AclOp, readonly AclOp[]>> = {
  read: ['read', 'describe'],
  write: ['write', 'describe'],
  delete: ['delete', 'describe'],
  alter: ['alter', 'describe'],
  'alter-configs': ['alter-configs', 'describe-configs']
}

/** The uncopied part of a source DENY given its translation, or null when it reaches the target whole. */
export function uncopiedDeny (deny: AclBinding, translation: AclTranslation): UncopiedDeny | null {
  if (deny.permission !== 'deny') return null
  if ('skip' in translation) {
    if (!NARROWING_SKIPS.has(translation.skip)) return null
    return { binding: deny, operations: new Set([deny.operation]) }
  }
  // Copied, but only a part (DENY ALL on kmirror's principal becomes DENY READ): every operation but that part.
  if (translation.binding.operation === deny.operation) return null
  return { binding: deny, operations: EVERY_OPERATION }
}

/**
 * The first uncopied DENY that narrows the source ALLOW `allow`, copied as `copied`, or undefined. Principal, host,
 * resource and operation must all overlap for a DENY to narrow an ALLOW.
 */
export function narrowingDeny (allow: AclBinding, copied: AclBinding, denies: readonly UncopiedDeny[]): AclBinding | undefined {
  const granted = IMPLIED[copied.operation] ?? [copied.operation]
  return denies.find(d =>
    d.binding.resourceType === allow.resourceType &&
    principalsOverlap(d.binding.principal, allow.principal) &&
    hostsOverlap(d.binding.host, allow.host) &&
    patternsOverlap(d.binding, allow) &&
    (d.operations.has('all') || granted.some(op => d.operations.has(op)))
  )?.binding
}

function principalsOverlap (a: string, b: string): boolean {
  return a === b || a === WILDCARD_PRINCIPAL || b === WILDCARD_PRINCIPAL
}

function hostsOverlap (a: string, b: string): boolean {
  return a === b || a === WILDCARD || b === WILDCARD
}
