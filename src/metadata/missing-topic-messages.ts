/**
 * What the topic refresh (remote-topics.ts) tells the operator of missing topics: a replicated source topic missing
 * from the source's listing (by its verdict, deletion-proof.ts), most of them absent at once, remote topics kept
 * over such an absence, a remote topic that could not be deleted with its source topic, and a remote topic deleted on
 * the target while replicated.
 */
import type { FlowConfig } from '../config/types.ts'
import { errorMessage } from '../errors.ts'
import { clusterContext } from '../kafka/connection-hints.ts'
import { shellWord, toolCommand } from '../kafka/tool-command.ts'
import { ABSENT_REFRESHES_FOR_MASS_DELETION, MissingVerdicts, type MassAbsence, type MissingTopic } from './deletion-proof.ts'

/** Most replicated topics absent at once: why none is taken as deleted yet, and what to check. */
export function massAbsenceMessage (flow: FlowConfig, mass: MassAbsence): string {
  const source = flow.source.alias
  return `cluster ${source} answers that ${mass.absent} of the ${mass.replicated} topics ${flow.name} replicates do not exist: kmirror takes them as ` +
    `deleted only if they stay absent for ${ABSENT_REFRESHES_FOR_MASS_DELETION} refreshes in a row, because a broker answering from an empty ` +
    `metadata cache after a restart, or ${source}.bootstrap.servers reaching another cluster, looks the same; check that ${source}.bootstrap.servers ` +
    `names the brokers of cluster ${source}`
}

/** Remote topics kept on purpose, their source topics' deletion proven over a mass absence: how to delete them by hand. */
export function remotesKeptMessage (flow: FlowConfig, kept: readonly string[]): string {
  const { source, target } = flow
  const shown = kept.length > 10 ? `${kept.slice(0, 10).join(', ')} and ${kept.length - 10} more` : kept.join(', ')
  const command = toolCommand('kafka-topics.sh', clusterContext(target.alias, target.admin), '--delete --topic REMOTE_TOPIC', 'ADMIN')
  return `${kept.length} source topic${kept.length === 1 ? '' : 's'} of ${flow.name} counted as deleted on cluster ${source.alias} while most replicated topics ` +
    `were absent at once: released, but their remote topics on cluster ${target.alias} (${shown}) are kept on purpose though ` +
    `sync.topic.deletions.enabled = true, because ${source.alias}.bootstrap.servers reaching another cluster looks the same, for good; check that ` +
    `${source.alias}.bootstrap.servers names the brokers of cluster ${source.alias}, and if the topics were really deleted there, delete each ` +
    `remote topic by hand: ${command}`
}

/** A replicated source topic missing from the source's listing, by its verdict (deletion-proof.ts). */
export function missingMessage (flow: FlowConfig, topic: string, remoteTopic: string, missing: MissingTopic): string {
  const source = flow.source.alias
  const kept = `it is not taken as deleted: it stays in the flow and its remote topic ${remoteTopic} on ${flow.target.alias} is kept`
  switch (missing.verdict) {
    case MissingVerdicts.UNAUTHORIZED:
      return `source topic ${topic} on ${source} can no longer be described by kmirror (TOPIC_AUTHORIZATION_FAILED): ${kept}. ` +
        `Fix: grant the principal of ${source}'s client settings ALLOW DESCRIBE and READ on TOPIC ${topic} on ${source} ` +
        `(or leave it out with ${flow.name}.topics.exclude)`
    case MissingVerdicts.ABSENT_ONCE:
      return `source topic ${topic} on ${source} does not exist any more; it counts as deleted if the next refresh finds it missing too`
    default:
      return `source topic ${topic} on ${source} is missing from the topic list, but asked by name ${source} answered ` +
        `${missing.error ?? 'that it exists'}: ${kept}`
  }
}

/**
 * The remote topic of a deleted source topic that `sync.topic.deletions.enabled` deleted, and the target did not
 * (ERROR): told once, since the refresh forgets the source topic. Nothing is copied into it any more.
 */
export function remoteNotDeletedMessage (flow: FlowConfig, topic: string, remoteTopic: string, error: unknown): string {
  const { source, target } = flow
  const command = toolCommand('kafka-topics.sh', clusterContext(target.alias, target.admin), `--delete --topic ${shellWord(remoteTopic)}`, 'ADMIN')
  return `source topic ${topic} was deleted on cluster ${source.alias}, but its remote topic ${remoteTopic} on cluster ${target.alias} could not be deleted ` +
    `(sync.topic.deletions.enabled): ${errorMessage(error)}. Nothing is copied into it any more, and kmirror does not try again: delete it by hand, ` +
    `as a principal allowed DELETE on topic ${remoteTopic} on cluster ${target.alias}: ${command}`
}

/**
 * A remote topic deleted on the target while replicated, created again: how it is copied again. TARGET_HAS_IDS:
 * whether the target gives topic ids (Kafka 2.8+), null while unknown.
 */
export function remoteDeletedMessage (flow: FlowConfig, topic: string, remoteTopic: string, targetHasIds: boolean | null, elsewhere: readonly number[] = []): string {
  const { source, target } = flow
  const head = `remote topic ${remoteTopic} was deleted on cluster ${target.alias} while kmirror replicated ${topic}: created it again; `
  const retention = '(records retention already deleted there cannot be copied again)'
  if (targetHasIds !== false) {
    return head + `every instance copying a partition of ${topic} sees the new topic id at its next write and copies that partition again from the log start of cluster ${source.alias} ${retention}`
  }
  if (elsewhere.length === 0) return head + `copying ${topic} again from the log start of cluster ${source.alias} ${retention}`
  // A target before Kafka 2.8 gives no topic ids: the other instances cannot tell the topic is new.
  return head + `copying the partitions of ${topic} this instance copies again from the log start of cluster ${source.alias} ${retention}. ` +
    `Partition(s) ${elsewhere.join(', ')} are not this instance's: their stored positions are forgotten, so one whose next owner reads them after this starts over, ` +
    `but a kmirror instance copying one already goes on from its position (a target without topic ids, before Kafka 2.8, cannot tell it the topic is new), ` +
    `and ${remoteTopic} lacks its records before that. ` +
    `Fix: stop every kmirror instance of the group but one, then delete ${remoteTopic} again: that instance copies every partition again; then start the others`
}
