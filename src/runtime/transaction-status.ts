/**
 * `kmirror status`, exactly-once mode: the transactions the flow's instances hold open on the target right now.
 * An open transaction holds read_committed readers of its partitions back until it ends; one left by an instance
 * that died ends only when the next instance fences it (at its first generation) or at its timeout. So the
 * operator asking "why do my read_committed consumers see nothing new?" reads here which id holds which topics, for
 * how long, and against which timeout.
 *
 * Invariants:
 * - Read only (ListTransactions and DescribeTransactions, open-transactions.ts): nothing is fenced or aborted.
 * - What cannot be listed is said, never shown as "none": a target before Kafka 3.0 (`listable` false), a broker
 *   or id that could not be asked (`missed`), or the whole listing failing (`error`).
 * - Absent in at-least-once mode.
 */
import { transactionTimeoutMs } from '../config/transaction-timeout.ts'
import type { FlowConfig } from '../config/types.ts'
import { errorMessage } from '../errors.ts'
import type { OpenTransaction, OpenTransactions } from '../kafka/open-transactions.ts'
import { longerGroupsOf, membersOfFlow } from './orphan-transactions.ts'

export interface OpenTransactionStatus {
  readonly transactionalId: string
  /** When it began, by the coordinator's clock (ISO). */
  readonly openSince: string
  /** Seconds since it began (0 when the coordinator's clock is ahead of this host's). */
  readonly openSeconds: number
  readonly timeoutMs: number
  /** The topics of the partitions it holds: read_committed readers of them wait for it. */
  readonly topics: readonly string[]
}

export interface FlowTransactionsStatus {
  /** The target cluster's alias. */
  readonly cluster: string
  /** Every instance's transactional id is this prefix followed by its member name. */
  readonly transactionalIdPrefix: string
  /** The flow's configured transaction timeout (`<target>.producer.transaction.timeout.ms`). */
  readonly transactionTimeoutMs: number
  /** False when the target cannot list open transactions (Kafka before 3.0): `open` is then empty and unknown. */
  readonly listable: boolean
  readonly open: readonly OpenTransactionStatus[]
  /** Brokers or transactional ids that could not be looked at, and why: `open` may lack theirs. */
  readonly missed: readonly { readonly what: string, readonly why: string }[]
  /** Why nothing could be listed at all (the target's brokers unreachable, the listing refused). */
  readonly error?: string
}

/** How the target is asked (ClusterClients): the open transactions under a prefix (null: the cluster cannot list them), and which groups exist. */
export interface TransactionReaders {
  readonly list: (prefix: string) => Promise<OpenTransactions | null>
  /** Those of GROUP_IDS that exist (or could not be told apart from existing ones); throws when they cannot be described. */
  readonly existingGroups: (groupIds: readonly string[]) => Promise<ReadonlySet<string>>
}

/** The flow's open transactions on its target; undefined in at-least-once mode. Never throws. */
export async function readFlowTransactions (flow: FlowConfig, readers: TransactionReaders, now: number): Promise<FlowTransactionsStatus | undefined> {
  if (!flow.exactlyOnce) return undefined
  const base = { cluster: flow.target.alias, transactionalIdPrefix: `${flow.groupId}-`, transactionTimeoutMs: transactionTimeoutMs(flow) }
  let listed: OpenTransactions | null
  try {
    listed = await readers.list(base.transactionalIdPrefix)
  } catch (err) {
    return { ...base, listable: true, open: [], missed: [], error: `cannot list the open transactions on ${flow.target.alias}: ${errorMessage(err)}` }
  }
  if (listed === null) return { ...base, listable: false, open: [], missed: [] }
  const { open, missed } = await withoutOtherGroups(flow, membersOfFlow(flow, listed.open), readers)
  return {
    ...base,
    listable: true,
    open: open.map(t => ({
      transactionalId: t.transactionalId,
      openSince: new Date(t.startedAt).toISOString(),
      openSeconds: Math.max(0, Math.round((now - t.startedAt) / 100) / 10),
      timeoutMs: t.timeoutMs,
      topics: t.topics
    })),
    missed: [...listed.missed, ...missed]
  }
}

/**
 * OPEN (ids of the flow's prefix and a member name, on topics the flow writes) without those of another flow whose
 * group id is longer (`kmirror-A-B-dr` owns `kmirror-A-B-dr-host:1:2`): the longer groups an id could belong to are
 * described; when they cannot be, every id is kept and that is said.
 */
async function withoutOtherGroups (flow: FlowConfig, open: readonly OpenTransaction[], readers: TransactionReaders): Promise<{ open: readonly OpenTransaction[], missed: OpenTransactions['missed'] }> {
  const longer = longerGroupsOf(flow.groupId, open.map(t => t.transactionalId))
  if (longer.all.length === 0) return { open, missed: [] }
  try {
    const existing = await readers.existingGroups(longer.all)
    return { open: open.filter(t => !longer.byId.get(t.transactionalId)!.some(g => existing.has(g))), missed: [] }
  } catch (err) {
    return { open, missed: [{ what: `groups ${longer.all.join(', ')}`, why: `not described (${errorMessage(err)}): an id listed that could be one of theirs may be another flow's` }] }
  }
}

/** The text of `kmirror status` for TRANSACTIONS: a line, then one per open transaction. */
export function renderTransactions (transactions: FlowTransactionsStatus): string[] {
  const target = transactions.cluster
  const head = `  exactly-once: transactional ids ${transactions.transactionalIdPrefix}<member>, timeout ${transactions.transactionTimeoutMs / 1000} s`
  if (transactions.error !== undefined) return [`${head}; open transactions unknown: ${transactions.error}`]
  if (!transactions.listable) {
    return [`${head}; open transactions unknown: cluster ${target} cannot list them (Kafka before 3.0); one left by a dead instance ends when the next instance fences it, or at its timeout`]
  }
  const open = transactions.open.length
  const missed = transactions.missed.length
  const found = open === 0 ? 'no open transactions' : `${open} open transaction${open === 1 ? '' : 's'}`
  const lines = [`${head}; ${found} on cluster ${target}` + (open === 0 ? '' : ': read_committed readers of their topics see nothing past them until they end') +
    (missed === 0 ? '' : `; not looked at: ${missed} (below)`)]
  for (const t of transactions.open) {
    const late = t.openSeconds * 1000 > t.timeoutMs ? ', past its timeout: the coordinator aborts it at its next look (every 10 s by default)' : ''
    lines.push(`    ${t.transactionalId}: open ${t.openSeconds} s of its ${t.timeoutMs / 1000} s timeout${late}; holds ${t.topics.join(', ')}`)
  }
  for (const m of transactions.missed) lines.push(`    not looked at: ${m.what}: ${m.why}`)
  return lines
}
