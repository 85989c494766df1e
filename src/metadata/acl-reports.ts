/**
 * What ACL sync tells people, in the log and in `kmirror plan`: a binding in Kafka's words, and why a source
 * binding is not copied. Pure but for the logger it is given.
 */
import { aclKey, type AclBinding } from '../kafka/acls.ts'
import type { SkippedAcl } from './acl-rules.ts'
import type { FlowContext } from './flow-context.ts'

/** `ALLOW READ on topic prefix A.orders for User:alice`, with ` from <host>` when the host is not `*`; operations in Kafka's words. */
export function formatAcl (b: AclBinding): string {
  const pattern = b.patternType === 'prefixed' ? 'prefix ' : ''
  const host = b.host === '*' ? '' : ` from ${b.host}`
  return `${b.permission.toUpperCase()} ${b.operation.toUpperCase().replaceAll('-', '_')} on ${b.resourceType} ${pattern}${b.resourceName} for ${b.principal}${host}`
}

/**
 * Logs the skipped bindings not logged by the previous run; returns the keys of this run's skips. An ALLOW not
 * copied because of a DENY is a warning (someone expects that grant on the target); other skips are debug.
 */
export function logNewSkips (skipped: readonly SkippedAcl[], previous: ReadonlySet<string>, log: FlowContext['log']): Set<string> {
  const current = new Set<string>()
  for (const { binding, reason, narrowedBy } of skipped) {
    const key = aclKey(binding)
    current.add(key)
    if (previous.has(key)) continue
    if (narrowedBy === undefined) log.debug({ acl: formatAcl(binding), reason }, 'ACL not copied')
    else log.warn({ acl: formatAcl(binding), deny: formatAcl(narrowedBy), reason }, narrowedMessage(binding, narrowedBy))
  }
  return current
}

/** Why an ALLOW is not copied because of a DENY, in one sentence, for the log and `kmirror plan`. */
export function narrowedMessage (allow: AclBinding, deny: AclBinding): string {
  return `ACL ${formatAcl(allow)} is not copied: the source's ${formatAcl(deny)} narrows it and cannot be copied whole ` +
    '(it would apply to kmirror\'s own principal on the target, or the replication policy cannot map it); grant on the target by hand what you mean'
}
