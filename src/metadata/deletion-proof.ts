/**
 * Whether a replicated source topic that a refresh no longer sees was deleted. A listing leaves out the topics
 * the principal may not DESCRIBE just as it leaves out deleted ones, so absence from a listing proves nothing:
 * the missing topics are asked for by name, and only an authorized "does not exist" (UNKNOWN_TOPIC_OR_PARTITION)
 * at two consecutive refreshes makes a deletion.
 *
 * Invariants:
 * - An authorization error, an error of any other kind or an answer that the topic exists never counts toward a
 *   deletion, and starts the count again.
 * - A topic listed again, or proven deleted, is forgotten: a later disappearance needs two absent answers again.
 * - When most replicated topics (at least two, more than half) are absent at once, it takes
 *   ABSENT_REFRESHES_FOR_MASS_DELETION refreshes: that is more often a broker answering from an empty metadata
 *   cache after a restart, or `bootstrap.servers` reaching another cluster, than a deletion; taken for one it would
 *   release every topic (and delete every remote topic with `sync.topic.deletions.enabled`).
 */
import { TopicPresences, type TopicProbe } from '../kafka/admin-client.ts'

/** How many consecutive refreshes must find a topic absent before it counts as deleted. */
export const ABSENT_REFRESHES_FOR_DELETION = 2
/** The same when most replicated topics are absent at once (see the invariants): a minute at the default 5 s refresh. */
export const ABSENT_REFRESHES_FOR_MASS_DELETION = 12

/** Most replicated topics absent at the last check: how many were, of how many replicated. */
export interface MassAbsence {
  readonly absent: number
  readonly replicated: number
}

export const MissingVerdicts = {
  /** Absent at two consecutive refreshes: deleted. */
  DELETED: 'deleted',
  /** Absent once: deleted only if the next refresh finds it absent too. */
  ABSENT_ONCE: 'absent-once',
  /** The principal may not describe it (TOPIC_AUTHORIZATION_FAILED): no proof of anything. */
  UNAUTHORIZED: 'unauthorized',
  /** Any other answer (exists after all, another error, no answer): no proof either. */
  UNPROVEN: 'unproven'
} as const
export type MissingVerdict = (typeof MissingVerdicts)[keyof typeof MissingVerdicts]

export interface MissingTopic {
  readonly verdict: MissingVerdict
  /** The Kafka error name the source answered with, when it answered one. */
  readonly error?: string
}

/** Asks a cluster about topics by name; `AdminClient.probeTopics` fits. */
export type TopicProber = (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>

export class DeletionProof {
  /** Topic → consecutive refreshes that found it absent, for topics missing at the last refresh. */
  #absences = new Map<string, number>()

  #massAbsence: MassAbsence | null = null

  /** Most replicated topics were absent at the last check (deletions then take longer to prove), or null. */
  get massAbsence (): MassAbsence | null {
    return this.#massAbsence
  }

  /**
   * The verdict for each topic in `missing`, of REPLICATED topics replicated in all; topics not in `missing` are
   * forgotten.
   */
  async check (missing: readonly string[], probe: TopicProber, replicated = Number.POSITIVE_INFINITY): Promise<Map<string, MissingTopic>> {
    const answers = missing.length === 0 ? new Map<string, TopicProbe>() : await probe(missing)
    const absent = missing.filter(topic => answers.get(topic)?.presence === TopicPresences.ABSENT).length
    const mass = absent >= 2 && absent * 2 > replicated
    this.#massAbsence = mass ? { absent, replicated } : null
    const needed = mass ? ABSENT_REFRESHES_FOR_MASS_DELETION : ABSENT_REFRESHES_FOR_DELETION
    const absences = new Map<string, number>()
    const out = new Map<string, MissingTopic>()
    for (const topic of missing) {
      const answer = answers.get(topic)
      const error = answer?.error === undefined ? {} : { error: answer.error }
      if (answer?.presence !== TopicPresences.ABSENT) {
        const verdict = answer?.presence === TopicPresences.UNAUTHORIZED ? MissingVerdicts.UNAUTHORIZED : MissingVerdicts.UNPROVEN
        out.set(topic, { verdict, ...error })
        continue
      }
      const count = (this.#absences.get(topic) ?? 0) + 1
      if (count >= needed) {
        out.set(topic, { verdict: MissingVerdicts.DELETED, ...error })
      } else {
        absences.set(topic, count)
        out.set(topic, { verdict: MissingVerdicts.ABSENT_ONCE, ...error })
      }
    }
    this.#absences = absences
    return out
  }
}
