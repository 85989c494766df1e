/**
 * Before a flow writes anything: is a live MirrorMaker 2 copying the same flow? MM2's herder for A->B is a
 * Connect worker group on B (`B.group.id`, default `<A>-mm2`: MirrorMakerConfig.workerConfig); kmirror describes
 * it (DescribeGroups, without joining) and reads each worker's assignment. A worker running MirrorSourceConnector
 * tasks copies A->B: kmirror refuses to start the flow, retriably, so the start retries wait for MM2 to stop
 * (a killed worker leaves the group once its session times out). Both would otherwise copy every record, and in
 * exactly-once mode their transactional ids (`<A>-mm2-MirrorSourceConnector-<task>`, `kmirror-A-B-<member>`) never
 * fence each other. A worker group that runs no MirrorSourceConnector task (A->B disabled in MM2, its herder kept
 * for heartbeats) does not copy the flow: logged, not refused. A group kmirror may not describe is logged with the
 * grant that enables the check, and the flow starts: the check is a guard, not a requirement.
 * A fresh target has no group coordinator yet (FindCoordinator creates `__consumer_offsets`: COORDINATOR_NOT_AVAILABLE,
 * then COORDINATOR_LOAD_IN_PROGRESS): the check asks again in place for up to COORDINATOR_WAIT_MS rather than
 * failing the whole start attempt (which closes and reopens every client of the flow). It never guesses "no MM2":
 * a coordinator that stays unavailable (its broker down) fails the attempt as before.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import { decodeConnectAssignment, decodeConnectMemberMetadata, runningTasks } from '../formats/connect-assignment.ts'
import { clusterContext } from '../kafka/connection-hints.ts'
import { isCoordinatorRetriable } from '../kafka/errors.ts'
import { GroupCoordinator } from '../kafka/group-coordinator.ts'
import { DescribeGroupsApi, type DescribedGroup, type DescribedMember } from '../kafka/protocol/describe-groups.ts'
import type { Logger } from '../logger.ts'

/** MM2's connector that copies records (its tasks run the flow's data path). */
export const MM2_SOURCE_CONNECTOR = 'MirrorSourceConnector'
const CONNECT_PROTOCOL_TYPE = 'connect'

/** How long the check waits in place for the target's group coordinator to come up (see above). */
export const COORDINATOR_WAIT_MS = 10_000

export const Mm2States = {
  /** No such group, an empty one, or another program's (not a Connect worker group). */
  ABSENT: 'absent',
  /** Live Connect workers, none running MirrorSourceConnector tasks: MM2 does not copy this flow. */
  NOT_COPYING: 'not-copying',
  /** At least one worker runs MirrorSourceConnector tasks: MM2 copies this flow. */
  COPYING: 'copying',
  /** Live workers, the group rebalancing or their bytes unreadable, no source task seen: treated as copying. */
  UNKNOWN: 'unknown'
} as const
export type Mm2State = (typeof Mm2States)[keyof typeof Mm2States]

export interface Mm2GroupVerdict {
  readonly state: Mm2State
  /** `clientId@host` of each live worker. */
  readonly workers: readonly string[]
  /** MirrorSourceConnector tasks the workers run. */
  readonly sourceTasks: number
}

/** The MirrorSourceConnector tasks MEMBER runs (its join allocation and last assignment); null if unreadable. */
function sourceTasksOf (member: DescribedMember): number | null {
  try {
    const allocation = decodeConnectMemberMetadata(member.metadata).allocation
    const assignment = member.assignment.length === 0 ? null : decodeConnectAssignment(member.assignment)
    return runningTasks(allocation, assignment, MM2_SOURCE_CONNECTOR).length
  } catch {
    return null // another protocol version's bytes: this member's work is unknown
  }
}

/**
 * What a described group says about MM2 on this flow (pure). A group that is not Stable (rebalancing: members
 * without their assignment yet) and shows no source task is UNKNOWN, as is one whose members cannot be read.
 */
export function judgeMm2Group (group: DescribedGroup | undefined): Mm2GroupVerdict {
  if (group === undefined || group.protocolType !== CONNECT_PROTOCOL_TYPE || group.members.length === 0) {
    return { state: Mm2States.ABSENT, workers: [], sourceTasks: 0 }
  }
  const workers = group.members.map(m => `${m.clientId}@${m.clientHost.replace(/^\//, '')}`).sort()
  const counts = group.members.map(sourceTasksOf)
  const sourceTasks = counts.reduce<number>((sum, n) => sum + (n ?? 0), 0)
  if (sourceTasks > 0) return { state: Mm2States.COPYING, workers, sourceTasks }
  const known = group.state === 'Stable' && counts.every(n => n !== null)
  return { state: known ? Mm2States.NOT_COPYING : Mm2States.UNKNOWN, workers, sourceTasks }
}

/** The flow's MM2 worker group as its coordinator describes it now. */
export async function describeMm2Group (flow: FlowConfig): Promise<DescribedGroup | undefined> {
  const props = flow.target.consumer
  const groupId = flow.mm2WorkerGroupId
  const coordinator = new GroupCoordinator(props, `kmirror-${flow.name}-mm2-check`, clusterContext(flow.target.alias, props), groupId, 0)
  try {
    const answer = await coordinator.send(DescribeGroupsApi, { groups: [groupId] }, 'beat')
    const group = answer.groups[0]
    if (group !== undefined && group.errorCode !== 0) throw coordinator.refusal(group.errorCode, 'DescribeGroups')
    return group
  } finally {
    await coordinator.close()
  }
}

/** The refusal for a flow MM2 copies (or may be copying: UNKNOWN). */
export function mm2RunningError (flow: FlowConfig, verdict: Mm2GroupVerdict): KmirrorError {
  const what = verdict.state === Mm2States.COPYING
    ? `${verdict.sourceTasks} ${MM2_SOURCE_CONNECTOR} task(s) run there`
    : 'it is rebalancing, so what they run is not known yet'
  return new KmirrorError(ErrorCodes.MM2_RUNNING,
    `MirrorMaker 2 is running flow ${flow.name}: its worker group ${flow.mm2WorkerGroupId} on cluster ${flow.target.alias} has ` +
    `${verdict.workers.length} live worker(s) (${verdict.workers.join(', ')}) and ${what}. kmirror and MM2 on one flow would both copy every ` +
    `record (in exactly-once mode too: their transactional ids never fence each other). Stop MM2 first (SIGTERM: it stores its ` +
    `progress, and kmirror resumes from it); kmirror checks again until start.retry.timeout.ms. To keep MM2 for other flows, ` +
    `set ${flow.name}.enabled = false in MM2's configuration`,
    { retriable: true, details: { group: flow.mm2WorkerGroupId, workers: verdict.workers, sourceTasks: verdict.sourceTasks } })
}

/**
 * Throws MM2_RUNNING (retriable) while a live MM2 copies FLOW or may be copying it; logs what it found otherwise.
 * A refused describe (no DESCRIBE on MM2's group) skips the check with the grant named in the log.
 */
export async function refuseWhileMm2Copies (flow: FlowConfig, log: Logger, describe = describeMm2Group, waitMs = COORDINATOR_WAIT_MS): Promise<void> {
  let group: DescribedGroup | undefined
  try {
    group = await describeOnceCoordinatorIsUp(flow, describe, waitMs)
  } catch (err) {
    if (!isKmirrorError(err) || err.code !== ErrorCodes.NOT_AUTHORIZED) throw err
    log.info({ group: flow.mm2WorkerGroupId, code: err.code },
      `could not check whether MirrorMaker 2 runs this flow: grant DESCRIBE on group ${flow.mm2WorkerGroupId} on cluster ${flow.target.alias} to let kmirror check`)
    return
  }
  const verdict = judgeMm2Group(group)
  if (verdict.state === Mm2States.COPYING || verdict.state === Mm2States.UNKNOWN) throw mm2RunningError(flow, verdict)
  if (verdict.state === Mm2States.NOT_COPYING) {
    log.info({ group: flow.mm2WorkerGroupId, workers: verdict.workers }, `MirrorMaker 2 workers are live in group ${flow.mm2WorkerGroupId} but run no ${MM2_SOURCE_CONNECTOR} task for this flow: starting`)
  }
}

/** Whether ERR is a group coordinator still being created or loaded (a fresh cluster's `__consumer_offsets`). */
function isCoordinatorStarting (err: unknown): boolean {
  if (!isKmirrorError(err) || !Array.isArray(err.details.kafkaErrors)) return false
  return (err.details.kafkaErrors as unknown[]).some(name => typeof name === 'string' && isCoordinatorRetriable(name))
}

/** DESCRIBE, asked again (50 ms, 100 ms, ... 500 ms apart) while the coordinator is starting, for up to WAIT_MS. */
async function describeOnceCoordinatorIsUp (flow: FlowConfig, describe: typeof describeMm2Group, waitMs: number): Promise<DescribedGroup | undefined> {
  const deadline = Date.now() + waitMs
  for (let pause = 50; ; pause = Math.min(500, pause * 2)) {
    try {
      return await describe(flow)
    } catch (err) {
      if (!isCoordinatorStarting(err) || Date.now() + pause > deadline) throw err
      await delay(pause)
    }
  }
}
