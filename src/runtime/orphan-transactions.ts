/**
 * Exactly-once in a group: the open transactions on the target of members gone from the flow's group, for its
 * first leader to fence (kafka/group-leader.ts `membersBeforeJoin`). The case it covers: a lone instance killed
 * (kill -9, a crashed host) and started again after its session ended. The group is empty then, no assignment
 * remembers the dead member, and its open transaction would hold every read_committed reader of the partitions it
 * wrote back until the transaction timeout (`<target>.producer.transaction.timeout.ms`, 60 s by default).
 *
 * Which transactions are the group's: a member writes under `<group id>-<member name>`, the member name being
 * `host:pid:start` (group-member-options.ts `defaultMemberName`). A transaction is taken as a member's when
 * - its id is the group id, a dash and a name of that form;
 * - every partition it holds is of a topic the flow writes in its transactions (its remote topics, its offset
 *   syncs, offset history and progress topics); and
 * - no other group on the target could own it: a name with dashes (`kmirror-A-B-dr-host:1:2` under `kmirror-A-B-`)
 *   may be a member of a group with a longer id (`kmirror-A-B-dr`). Each such group is described, and the
 *   transaction is left alone when one exists (whatever its state) or cannot be described. The topic check alone
 *   does not tell them apart: under IdentityReplicationPolicy every topic is "a remote topic of the source", and a
 *   broker leaves out of DescribeTransactions the topics the principal may not describe.
 * When unsure, nothing is fenced: the transaction then ends at its timeout, as before. Members of this group that
 * are alive are never fenced whatever is found: the leader fences only members missing from the generation it
 * leads (sticky-assignor.ts).
 */
import type { PreviousMember } from '../cluster/sticky-assignor.ts'
import { errorMessage } from '../errors.ts'
import { offsetHistoryTopic } from '../checkpoint/offset-history-store.ts'
import { transactionTimeoutMs } from '../config/transaction-timeout.ts'
import type { FlowConfig } from '../config/types.ts'
import { resolveAfter } from '../deadline.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { OpenTransaction } from '../kafka/open-transactions.ts'
import type { Logger } from '../logger.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { offsetSyncsTopicName } from '../replication/offset-sync-emitter.ts'

/** `host:pid:start`, as `defaultMemberName` makes it. */
const MEMBER_NAME = /^.+:\d+:\d+$/

/** How long the listing may hold up the first join (a wedged broker would hold it for its request timeouts). */
export const OPEN_TRANSACTIONS_PATIENCE_MS = 10_000

/** What a transaction not fenced costs, with the flow's own timeout (the dead instance most likely ran the same file). */
function atTimeout (config: FlowConfig): string {
  const ms = transactionTimeoutMs(config)
  return `a transaction of an instance that died before this one started ends at its transaction timeout (${config.target.alias}.producer.transaction.timeout.ms, ${ms / 1000} s in this configuration): read_committed readers of its partitions wait until then`
}

/** The open transactions of members gone, as members to fence (name from the id); [] when they cannot be known. */
export async function openTransactionsOfGone (config: FlowConfig, log: Logger): Promise<PreviousMember[]> {
  const target = new ClusterClients(config.target, `${config.name}|group-fencer`, 'target')
  const fields = { group: config.groupId, cluster: target.label }
  // Given up on: the join went ahead without it, so what it finds later is neither logged nor used.
  const abandoned = { now: false }
  const work = membersGone(config, target, log, abandoned)
  const late = Symbol('late')
  let found: PreviousMember[] | typeof late = []
  try {
    found = await resolveAfter(work, OPEN_TRANSACTIONS_PATIENCE_MS, late)
  } catch (err) {
    log.info({ ...fields, err }, `cannot list the open transactions on ${target.label}; joining the group without them: ${atTimeout(config)}`)
  }
  if (found !== late) {
    await target.close()
    return found
  }
  abandoned.now = true
  // Its requests end at their own timeouts; the clients close then, without holding up the join.
  void work.catch(() => undefined).finally(async () => { await target.close().catch(() => undefined) })
  log.info({ ...fields, waitedMs: OPEN_TRANSACTIONS_PATIENCE_MS }, `the open transactions on ${target.label} were not listed within ${OPEN_TRANSACTIONS_PATIENCE_MS / 1000} s; joining the group without them: ${atTimeout(config)}`)
  return []
}

async function membersGone (config: FlowConfig, target: ClusterClients, log: Logger, abandoned: { readonly now: boolean }): Promise<PreviousMember[]> {
  const fields = { group: config.groupId, cluster: target.label }
  const listed = await target.openTransactions(`${config.groupId}-`)
  if (abandoned.now) return []
  if (listed === null) {
    log.info(fields, `${target.label} cannot list open transactions (Kafka before 3.0): ${atTimeout(config)}`)
    return []
  }
  for (const m of listed.missed) log.info({ ...fields, missed: m.what, cause: m.why }, `could not look at the open transactions of ${m.what} on ${target.label}: ${atTimeout(config)}`)
  const candidates = membersOfFlow(config, listed.open)
  const others = await otherGroupsOf(config, candidates.map(t => t.transactionalId), target, log)
  if (abandoned.now) return []
  const gone = candidates.filter(t => !others.has(t.transactionalId))
  for (const t of gone) {
    log.info({ ...fields, transactionalId: t.transactionalId, openSince: new Date(t.startedAt).toISOString(), topics: t.topics },
      'found a transaction left open by a member gone from the group: the first leader fences it')
  }
  return gone.map(t => ({ name: t.transactionalId.slice(config.groupId.length + 1), transactionalId: t.transactionalId }))
}

/** Those of OPEN that a member of the flow's group may have left: the id's form and the topics (module comment). */
export function membersOfFlow (config: FlowConfig, open: readonly OpenTransaction[]): OpenTransaction[] {
  const policy = createReplicationPolicy(config.replicationPolicy)
  const own = new Set([config.offsetStorageTopic, offsetHistoryTopic(config.source.alias), offsetSyncsTopicName(config, policy)])
  const written = (topic: string): boolean => own.has(topic) || (policy.topicSource(topic) === config.source.alias && !policy.isInternalTopic(topic))
  const prefix = `${config.groupId}-`
  return open.filter(t => t.transactionalId.startsWith(prefix) && MEMBER_NAME.test(t.transactionalId.slice(prefix.length)) &&
    t.topics.length > 0 && t.topics.every(written))
}

/** The groups with a longer id that ID could belong to: `<group>-x`, `<group>-x-y`, ... at each dash of its name. */
export function longerGroupIds (groupId: string, id: string): string[] {
  const name = id.slice(groupId.length + 1)
  const out: string[] = []
  for (let at = name.indexOf('-'); at > 0; at = name.indexOf('-', at + 1)) out.push(`${groupId}-${name.slice(0, at)}`)
  return out
}

/** The longer groups each of IDS could belong to (`longerGroupIds`), and all of them once, to describe. */
export function longerGroupsOf (groupId: string, ids: readonly string[]): { readonly byId: ReadonlyMap<string, readonly string[]>, readonly all: string[] } {
  const byId = new Map(ids.map(id => [id, longerGroupIds(groupId, id)]))
  return { byId, all: [...new Set([...byId.values()].flat())] }
}

/**
 * Those of GROUP_IDS that exist on TARGET; a group the answer leaves out cannot be told from an existing one. Throws
 * when they cannot be described (a refusal names the DESCRIBE grant on groups prefixed `<group id>-`).
 */
export async function existingGroups (target: ClusterClients, groupId: string, groupIds: readonly string[]): Promise<Set<string>> {
  const groups = await target.admin.groups.describeGroups(groupIds, 'DESCRIBE', `${groupId}-`)
  return new Set(groupIds.filter(g => groups.get(g)?.state !== 'Dead'))
}

/** Which of IDS another group on the target may own: one of its `longerGroupIds` exists, or could not be described. */
async function otherGroupsOf (config: FlowConfig, ids: readonly string[], target: ClusterClients, log: Logger): Promise<Set<string>> {
  const longer = longerGroupsOf(config.groupId, ids)
  if (longer.all.length === 0) return new Set()
  try {
    const existing = await existingGroups(target, config.groupId, longer.all)
    return new Set(ids.filter(id => longer.byId.get(id)!.some(g => existing.has(g))))
  } catch (err) {
    // A refusal's message names the prefixed grant that lets the next start tell them (docs/operations.md, rows "exactly-once").
    log.info({ group: config.groupId, cluster: target.label, groups: longer.all, err },
      `cannot tell whether groups ${longer.all.join(', ')} exist on ${target.label}; the open transactions whose id could be theirs are left alone: ${atTimeout(config)}. ${errorMessage(err)}`)
    return new Set(ids.filter(id => longer.byId.get(id)!.length > 0))
  }
}
