/**
 * What ACL sync tells people, in the log and in `kmirror plan`: a binding in Kafka's words, why a source binding is
 * not copied, and why a copy kmirror made is removed. Pure but for the logger it is given.
 *
 * A skip is debug, except where someone expects the grant on the target and would otherwise not learn why it is
 * missing (`WARNINGS`): that skip carries a warning naming the binding, the target cluster and the fix, which the log
 * gives once at WARN and `kmirror plan` as a `!` line. A copy kmirror made earlier is removed with the reason its
 * source binding is skipped now, when that binding still exists (a copy is the `copy` of at most one reason).
 */
import { aclKey, type AclBinding } from '../kafka/acls.ts'
import { AclSkipReasons, coveredKmirrorTopic, type AclPattern, type AclRuleContext, type AclSkipReason, type SkippedAcl } from './acl-rules.ts'
import type { FlowContext } from './flow-context.ts'

/** `ALLOW READ on topic prefix A.orders for User:alice`, with ` from <host>` when the host is not `*`; operations in Kafka's words. */
export function formatAcl (b: AclBinding): string {
  const pattern = b.patternType === 'prefixed' ? 'prefix ' : ''
  const host = b.host === '*' ? '' : ` from ${b.host}`
  return `${b.permission.toUpperCase()} ${b.operation.toUpperCase().replaceAll('-', '_')} on ${b.resourceType} ${pattern}${b.resourceName} for ${b.principal}${host}`
}

type WarningContext = Pick<AclRuleContext, 'kmirrorTopics'> & { readonly target: string }

/** The skips that warn, each with its sentence: an ALLOW someone granted on the source and will look for on the target. */
const WARNINGS: Partial<Record<AclSkipReason, (s: SkippedAcl, context: WarningContext) => string | undefined>> = {
  [AclSkipReasons.NARROWED_BY_UNCOPIED_DENY]: (s, { target }) => s.narrowedBy === undefined
    ? undefined
    : `ACL ${formatAcl(s.binding)} is not copied: the source's ${formatAcl(s.narrowedBy)} narrows it and cannot be copied whole ` +
      `(kmirror plan --json gives why that DENY is not copied); grant on cluster ${target} by hand what you mean`,
  [AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC]: (s, context) => {
    const covered = s.copy === undefined ? undefined : coveredKmirrorTopic(s.copy, context)
    if (s.copy === undefined || covered === undefined) return undefined
    return `ACL ${formatAcl(s.binding)} is not copied: on cluster ${context.target} its prefix ${s.copy.resourceName} would also cover ` +
      `${describeCovered(covered)}, kept there by kmirror or MM2 and no copy of a topic under ${s.binding.resourceName}; ` +
      `grant the remote topics under it by name, or a narrower prefix, on cluster ${context.target} by hand`
  }
}

function describeCovered (p: AclPattern): string {
  return p.patternType === 'prefixed' ? `the internal topics ${p.resourceName}*` : `topic ${p.resourceName}`
}

/**
 * S with its warning when it is a skip that warns (`WARNINGS`); TARGET is the target cluster's alias. FOREIGN: a
 * binding equal to its copy is on the target already, not made by kmirror (by hand, by MM2 for a literal topic copy:
 * it copies literal topic bindings only, or by a kmirror older than its ownership record): kmirror never removes
 * what it did not make, so the warning says that one grants what the skip keeps off.
 */
export function withWarning (s: SkippedAcl, rules: Pick<AclRuleContext, 'kmirrorTopics'>, target: string, foreign = false): SkippedAcl {
  const warning = WARNINGS[s.reason]?.(s, { kmirrorTopics: rules.kmirrorTopics, target })
  if (warning === undefined) return s
  if (!foreign || s.copy === undefined) return { ...s, warning }
  // (MM2 copies literal topic bindings: such a copy may be MM2's, made while MM2 ran this flow)
  const byMm2 = s.copy.patternType === 'literal' && s.copy.resourceType === 'topic'
  const makers = `by hand, ${byMm2 ? 'by MM2 (which copies literal topic bindings), ' : ''}or by a kmirror older than its ownership record`
  return {
    ...s,
    warning: `${warning}. A binding equal to that copy, ${formatAcl(s.copy)}, is on cluster ${target} already, not made by kmirror ` +
      `(${makers}): it grants there what kmirror keeps off, and kmirror never removes what it did not make; remove it if that is not meant (kafka-acls.sh --remove)`
  }
}

/** Logs the skipped bindings not logged by the previous run, at WARN those with a warning; returns the keys of this run's skips. */
export function logNewSkips (skipped: readonly SkippedAcl[], previous: ReadonlySet<string>, log: FlowContext['log']): Set<string> {
  const current = new Set<string>()
  for (const { binding, reason, narrowedBy, warning } of skipped) {
    // By reason and warning too: a binding skipped for another reason now (a prefix a replicated topic now lies under,
    // which covers a kmirror topic), or whose warning changed (an equal binding made by someone else appeared on the
    // target), is told again, its warning included.
    const key = `${aclKey(binding)} ${reason} ${warning ?? ''}`
    current.add(key)
    if (previous.has(key)) continue
    if (warning === undefined) log.debug({ acl: formatAcl(binding), reason }, 'ACL not copied')
    else log.warn({ acl: formatAcl(binding), ...(narrowedBy === undefined ? {} : { deny: formatAcl(narrowedBy) }), reason }, warning)
  }
  return current
}

/** The skips that have a copy, by the key of that copy: a copy kmirror made that is one of them is removed for its reason. */
export function skipsByCopy (skipped: readonly SkippedAcl[]): ReadonlyMap<string, SkippedAcl> {
  const byCopy = new Map<string, SkippedAcl>()
  for (const s of skipped) if (s.copy !== undefined && !byCopy.has(aclKey(s.copy))) byCopy.set(aclKey(s.copy), s)
  return byCopy
}

/** Why kmirror removes B, a binding it created: `its source binding is gone`, or the reason that binding is skipped now. */
export function removalCause (b: AclBinding, skips: ReadonlyMap<string, SkippedAcl>): string {
  const skip = skips.get(aclKey(b))
  if (skip === undefined) return 'its source binding is gone'
  const deny = skip.narrowedBy === undefined ? '' : ` (${formatAcl(skip.narrowedBy)})`
  return `its source binding ${formatAcl(skip.binding)} is no longer copied: ${skip.reason}${deny}`
}

/**
 * Logs the removal of B, with why (`removalCause`): at info, but at warn for a DENY whose source binding still
 * exists (no longer copied, as one that would stop kmirror): the target no longer refuses what the source refuses.
 * kmirror's own copies of the ALLOWs it narrowed go with it; an ALLOW made on the target by hand does not, and
 * grants from then on what the DENY held back.
 */
export function logRemoval (b: AclBinding, skips: ReadonlyMap<string, SkippedAcl>, log: FlowContext['log']): void {
  const skip = skips.get(aclKey(b))
  const source = skip === undefined ? {} : { source: formatAcl(skip.binding), reason: skip.reason }
  const msg = `removed ACL from the target: kmirror created it and ${removalCause(b, skips)}`
  if (skip === undefined || b.permission !== 'deny') {
    log.info({ acl: formatAcl(b), ...source }, msg)
    return
  }
  // A DENY that would stop kmirror cannot come back as it was: the one to add by hand must leave kmirror out.
  const blocksKmirror = skip.reason === AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR || skip.reason === AclSkipReasons.GROUP_DENY_WOULD_BLOCK_KMIRROR
  log.warn({ acl: formatAcl(b), ...source }, `${msg}. The target no longer refuses what this DENY refused: kmirror removed its own copies of the ALLOWs it ` +
    'narrows, but an ALLOW made on the target by hand under it now grants that access. Check the target\'s ACLs for such ALLOWs, and add a DENY ' +
    `there by hand${blocksKmirror ? ' that leaves out kmirror\'s principal and topics' : ''} if the refusal must hold`)
}
