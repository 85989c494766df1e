/**
 * `kmirror plan <file>`: prints, per flow, what the next sync would change on the target (topics to create,
 * partitions to add, config keys with old and new values, ACLs to add) and the problems it cannot fix.
 * Changes nothing. Exit 0: nothing to do; 1: drift; 2: bad configuration; 3: a cluster could not be read (as every
 * command that reads clusters: unreachable, refused, or a broker older than Kafka 2.1).
 */
import { reportCommandFailure } from './unexpected-errors.ts'
import { loadInput, loadSelectedFlows } from './config-input.ts'
import { ExitCodes } from '../errors.ts'
import { formatAcl, removalCause, skipsByCopy } from '../metadata/acl-reports.ts'
import { hasDrift, planFlow, type FlowPlan } from '../runtime/plan.ts'
import { writeJson } from '../redactor.ts'

export async function planCommand (file: string, options: { clusters: string[] | undefined, json: boolean }): Promise<number> {
  const input = loadInput(() => loadSelectedFlows(file, options.clusters).flows)
  if (!input.ok) return input.exitCode
  const plans: FlowPlan[] = []
  for (const flow of input.value) {
    try {
      plans.push(await planFlow(flow))
    } catch (err) {
      return reportCommandFailure(err, `cannot plan flow ${flow.name}`)
    }
  }
  if (options.json) writeJson(process.stdout, plans.map(planDocument))
  else process.stdout.write(plans.map(renderPlan).join('\n'))
  return plans.some(hasDrift) ? ExitCodes.DRIFT : ExitCodes.OK
}

/** A flow's plan as `--json` prints it: with `drift`, and each ACL removal with its `cause` (as the text gives it). */
export function planDocument (plan: FlowPlan): Record<string, unknown> {
  const { acls } = plan
  if (acls === null) return { ...plan, drift: hasDrift(plan) }
  const skips = skipsByCopy(acls.skipped)
  return { ...plan, acls: { ...acls, remove: acls.remove.map(b => ({ ...b, cause: removalCause(b, skips) })) }, drift: hasDrift(plan) }
}

export function renderPlan (plan: FlowPlan): string {
  const { topics, acls } = plan
  const lines = [`flow ${plan.flow}: ${hasDrift(plan) ? 'changes to make' : 'in sync, nothing to do'}`]
  for (const c of topics.create) {
    const configs = Object.entries(c.configs).map(([k, v]) => `${k}=${v}`).join(', ')
    lines.push(`  + create topic ${c.remoteTopic} (${c.partitions} partitions, replication factor ${c.replicationFactor === -1 ? 'broker default' : c.replicationFactor})${configs === '' ? '' : `: ${configs}`}`)
  }
  for (const a of topics.addPartitions) lines.push(`  + grow ${a.remoteTopic} from ${a.from} to ${a.to} partitions`)
  for (const a of topics.alterConfigs) {
    for (const c of a.changes) {
      lines.push(c.op === 'set'
        ? `  ~ ${a.remoteTopic} ${c.name}: ${c.oldValue ?? '(not set)'} -> ${c.newValue}`
        : `  ~ ${a.remoteTopic} ${c.name}: ${c.oldValue ?? '(not set)'} -> (target default)`)
    }
  }
  for (const d of topics.deletedOnSource) lines.push(`  ${d.deleteRemote ? '-' : '!'} ${d.topic} was deleted on the source; ${d.deleteRemote ? `delete ${d.remoteTopic}` : `${d.remoteTopic} is kept`}`)
  const skips = skipsByCopy(acls?.skipped ?? [])
  for (const b of acls?.create ?? []) lines.push(`  + ACL ${formatAcl(b)}`)
  for (const b of acls?.remove ?? []) lines.push(`  - ACL ${formatAcl(b)} (kmirror created it; ${removalCause(b, skips)})`)
  for (const k of acls?.skipped ?? []) if (k.warning !== undefined) lines.push(`  ! ${k.warning}`)
  if (acls !== null && acls.noAuthorizer.length > 0) lines.push(`  (no ACL sync: no authorizer on the ${acls.noAuthorizer.join(' and ')} cluster)`)
  for (const p of topics.problems) lines.push(`  ! cannot replicate ${p.topic}: ${p.message}`)
  for (const p of topics.warnings) lines.push(`  ! ${p.message}`)
  for (const p of topics.configsUnread) lines.push(`  ! ${p.message}`)
  return `${lines.join('\n')}\n`
}
