/**
 * Offset translation for commands (`kmirror offsets translate`; failover, failback and offsets set plans): reads the exact
 * offset history and the replication positions from the TARGET cluster, and a group's commits from the source,
 * without writing anything.
 */
import { translateCommits, type TranslatedCommit, type Translator } from '../checkpoint/checkpoint-emitter.ts'
import type { FlowConfig, KmirrorConfig } from '../config/types.ts'
import { ConfigError } from '../errors.ts'
import { planFailback, planFailover, type MoveOptions, type OffsetsPlan } from '../failover/failover.ts'
import { planOffsetsSet, type OffsetsSetPlan, type OffsetsSetRequest } from '../failover/offsets-set.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { loadFlowHistory } from '../failover/flow-history.ts'

/** The flow `from->to` of the file, enabled or not; a ConfigError naming the aliases otherwise. */
export function findFlow (config: KmirrorConfig, from: string, to: string): FlowConfig {
  const flow = config.flows.find(f => f.source.alias === from && f.target.alias === to)
  if (flow === undefined) {
    throw new ConfigError([{ message: `there is no flow ${from}->${to}: --from and --to must be two different aliases of clusters = ${config.clusters.join(', ')}` }], config.sourceFile)
  }
  return flow
}

export interface OpenTranslator extends Translator {
  close: () => Promise<void>
}

/** Loads the exact history and the replication positions of a flow from its target, read-only. */
export async function openTranslator (flow: FlowConfig): Promise<OpenTranslator> {
  const target = new ClusterClients(flow.target, `${flow.name}|translate`, 'target')
  const close = async (): Promise<void> => { await target.close() }
  try {
    await target.checkBrokers()
    const history = await loadFlowHistory(flow, createReplicationPolicy(flow.replicationPolicy), target.admin, target.reader)
    return { translate: history.toTarget, close }
  } catch (err) {
    await close()
    throw err
  }
}

export async function translateGroup (flow: FlowConfig, group: string): Promise<TranslatedCommit[]> {
  const source = new ClusterClients(flow.source, `${flow.name}|translate`, 'source')
  let translator: OpenTranslator | undefined
  try {
    await source.checkBrokers()
    translator = await openTranslator(flow)
    const commits = await source.admin.groups.listCommittedOffsets(group)
    const policy = createReplicationPolicy(flow.replicationPolicy)
    return translateCommits(group, commits, translator, topic => policy.formatRemoteTopic(flow.source.alias, topic))
  } finally {
    await Promise.all([source.close(), translator?.close()])
  }
}

/** `kmirror failover`: plans moving groups from the flow's source to its target (reads only). */
export async function planFailoverOf (flow: FlowConfig, options: MoveOptions): Promise<OffsetsPlan> {
  return await planFailover(flow, options)
}

/** `kmirror failback`: plans moving groups from the flow's target back to its source (reads only). */
export async function planFailbackOf (flow: FlowConfig, options: MoveOptions): Promise<OffsetsPlan> {
  return await planFailback(flow, options)
}

/** `kmirror offsets set`: plans moving consumer groups' offsets on one cluster (reads only). */
export async function planOffsetsSetOf (request: OffsetsSetRequest): Promise<OffsetsSetPlan> {
  return await planOffsetsSet(request)
}
