/**
 * What MM2 makes of the periods of its periodic jobs, read in the sources of MirrorMaker 2 3.9.1 and 4.1.1 (the
 * same in both), and what kmirror makes of them:
 * - `X.enabled = false` or a negative `X.interval.seconds` turns the job off (the config's interval is then
 *   negative, and Scheduler.scheduleRepeating returns without scheduling; the heartbeat and checkpoint connectors
 *   start no task).
 * - 0 with the job on: refresh.topics, sync.topic.configs and sync.topic.acls (MirrorSourceConnector.start) and
 *   refresh.groups (MirrorCheckpointConnector.start) hand a period of 0 to the JDK's scheduleAtFixedRate, which
 *   throws: the connector fails to start. kmirror refuses the configuration instead (validateJobIntervals).
 * - `sync.group.offsets.interval.seconds = 0`: MirrorCheckpointTask schedules the sync from a background start
 *   step, after its stores are loaded; the JDK's refusal is logged there (ERROR) and the task runs on without the
 *   sync, checkpoints included. kmirror does the same (no group offset sync) and warns.
 * - `emit.checkpoints.interval.seconds = 0`: MirrorCheckpointTask.poll waits the period between passes, so it
 *   checkpoints without any pause. kmirror checkpoints as often as it can usefully: every MIN_CHECKPOINT_INTERVAL_MS.
 * - Checkpoints off (`emit.checkpoints.enabled = false` or a negative period): MirrorCheckpointConnector starts no
 *   task, and so MM2 runs no group offset sync either, whatever `sync.group.offsets.*` say. kmirror syncs group
 *   offsets all the same (they come from its offset history, not from its checkpoints) and warns.
 * - `emit.heartbeats.interval.seconds = 0`: the same in MirrorHeartbeatTask.poll; kmirror emits every
 *   MIN_HEARTBEAT_INTERVAL_MS (heartbeat-emitter.ts).
 * - `emit.offset-syncs.enabled = false` with checkpoints on: MirrorCheckpointConfig's validation fails ("can't run
 *   without offset syncs"), so MM2 writes no checkpoints and syncs no group offsets. kmirror checkpoints all the
 *   same (its offset history does not depend on the offset-syncs topic) and warns.
 */
import type { ConfigProblem } from '../errors.ts'
import type { FlowConfig } from './types.ts'
import type { ConfigWarning } from './warnings.ts'

/** `emit.checkpoints.interval.seconds = 0` makes MM2 checkpoint without a pause; kmirror waits at least this long. */
export const MIN_CHECKPOINT_INTERVAL_MS = 1000
/** `emit.heartbeats.interval.seconds = 0` makes MM2's task spin; kmirror waits at least this long. */
export const MIN_HEARTBEAT_INTERVAL_MS = 100

type CheckpointKeys = Pick<FlowConfig, 'emitCheckpointsEnabled' | 'emitCheckpointsIntervalSeconds'>
type GroupSyncKeys = Pick<FlowConfig, 'syncGroupOffsetsEnabled' | 'syncGroupOffsetsIntervalSeconds'>

/** How often checkpoints are written, or null when they are off (MirrorCheckpointConnector starts no task). */
export function checkpointIntervalMs (flow: CheckpointKeys): number | null {
  if (!flow.emitCheckpointsEnabled || !(flow.emitCheckpointsIntervalSeconds >= 0)) return null
  return Math.max(MIN_CHECKPOINT_INTERVAL_MS, flow.emitCheckpointsIntervalSeconds * 1000)
}

/** How often group offsets are synced, or null when the sync is off (negative, or 0 as MM2's task ends up with). */
export function groupOffsetSyncIntervalMs (flow: GroupSyncKeys): number | null {
  if (!flow.syncGroupOffsetsEnabled || !(flow.syncGroupOffsetsIntervalSeconds > 0)) return null
  return flow.syncGroupOffsetsIntervalSeconds * 1000
}

/** The jobs whose period of 0 makes MM2's connector fail to start: the `<job>.enabled` and interval key prefix. */
const FAILING_AT_ZERO: readonly [job: string, enabled: (f: FlowConfig) => boolean, seconds: (f: FlowConfig) => number, connector: string][] = [
  ['refresh.topics', f => f.refreshTopicsEnabled, f => f.refreshTopicsIntervalSeconds, 'MirrorSourceConnector'],
  ['sync.topic.configs', f => f.syncTopicConfigsEnabled, f => f.syncTopicConfigsIntervalSeconds, 'MirrorSourceConnector'],
  ['sync.topic.acls', f => f.syncTopicAclsEnabled, f => f.syncTopicAclsIntervalSeconds, 'MirrorSourceConnector'],
  ['refresh.groups', f => f.refreshGroupsEnabled, f => f.refreshGroupsIntervalSeconds, 'MirrorCheckpointConnector']
]

/** A period of 0 that MM2's connector cannot start with, as a problem naming the key and what to write instead. */
export function zeroIntervalProblems (flow: FlowConfig): ConfigProblem[] {
  return FAILING_AT_ZERO.filter(([, enabled, seconds]) => enabled(flow) && seconds(flow) === 0).map(([job, , , connector]) => ({
    key: `${flow.name}.${job}.interval.seconds`,
    message: `is 0, which MM2 cannot run (its scheduler refuses a period of 0 and ${connector} fails to start): ` +
      `give a period in seconds above 0, or turn the job off with ${job}.enabled = false (a negative interval also turns it off, as in MM2)`
  }))
}

/**
 * Periods MM2 runs with, but not as written: what it (and kmirror) does instead; and group offsets synced without
 * checkpoints, or checkpoints without offset syncs, which MM2 never does (its checkpoint connector then runs no task,
 * and the task runs the sync).
 */
export function jobIntervalWarnings (flow: FlowConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = []
  if (groupOffsetSyncIntervalMs(flow) !== null && checkpointIntervalMs(flow) === null) {
    warnings.push({
      key: `${flow.name}.sync.group.offsets.enabled`,
      message: 'is true while checkpoints are off (emit.checkpoints.enabled = false or a negative emit.checkpoints.interval.seconds): ' +
        'MM2 then starts no checkpoint task and syncs no group offsets; kmirror syncs them all the same. Turn checkpoints on to sync with MM2 too'
    })
  }
  if (flow.syncGroupOffsetsEnabled && flow.syncGroupOffsetsIntervalSeconds === 0) {
    warnings.push({
      key: `${flow.name}.sync.group.offsets.interval.seconds`,
      message: 'is 0: MM2\'s checkpoint task cannot schedule a period of 0 (it logs an ERROR) and never syncs group offsets, so kmirror does not either; ' +
        'give a period in seconds above 0 to sync them, or set sync.group.offsets.enabled = false to say so'
    })
  }
  if (flow.emitCheckpointsEnabled && flow.emitCheckpointsIntervalSeconds === 0) {
    warnings.push({
      key: `${flow.name}.emit.checkpoints.interval.seconds`,
      message: `is 0: MM2 checkpoints without any pause; kmirror checkpoints every ${MIN_CHECKPOINT_INTERVAL_MS / 1000} s (only what changed is written, as in MM2)`
    })
  }
  if (!flow.emitOffsetSyncsEnabled && checkpointIntervalMs(flow) !== null) {
    warnings.push({
      key: `${flow.name}.emit.offset-syncs.enabled`,
      message: 'is false while checkpoints are on: MM2\'s checkpoint connector cannot run without offset syncs, so MM2 writes no checkpoints ' +
        'and syncs no group offsets; kmirror checkpoints from its own offset history all the same. Set emit.checkpoints.enabled = false to match MM2'
    })
  }
  if (flow.emitHeartbeatsEnabled && flow.emitHeartbeatsIntervalSeconds === 0) {
    warnings.push({
      key: `${flow.name}.emit.heartbeats.interval.seconds`,
      message: `is 0: MM2 emits heartbeats without any pause; kmirror emits one every ${MIN_HEARTBEAT_INTERVAL_MS} ms`
    })
  }
  return warnings
}
