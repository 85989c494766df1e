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
 * - The threshold belongs to each topic's absence, not to the refresh: an absence that was part of a mass absence
 *   at any of its refreshes needs ABSENT_REFRESHES_FOR_MASS_DELETION, even once fewer topics are absent. Decided
 *   per refresh, 4 topics all absent at one refresh and 2 of them at the next (no more than half) made those 2
 *   deleted at their second absence. Its verdicts say so (`massAbsence`): a deletion proven that way never deletes a
 *   remote topic (another cluster reached for good looks the same).
 *
 * Example (4 replicated topics a, b, c, d): refresh 1 finds all 4 absent (mass: each needs 12); refresh 2 finds a
 * and b absent (not mass, but their absences began in one): a and b are at 2 of 12, not deleted.
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
  /**
   * Set on an absent topic (ABSENT_ONCE or DELETED) whose absence was part of a mass absence at one of its refreshes:
   * it takes ABSENT_REFRESHES_FOR_MASS_DELETION refreshes, and once DELETED its remote topic is never deleted.
   */
  readonly massAbsence?: true
}

/** One topic's absence so far: consecutive refreshes that found it absent, and whether one was a mass absence. */
interface Absence {
  readonly count: number
  readonly mass: boolean
}

/** Asks a cluster about topics by name; `AdminClient.probeTopics` fits. */
export type TopicProber = (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>

export class DeletionProof {
  /** Topic → its absence so far, for topics absent at the last refresh. */
  #absences = new Map<string, Absence>()

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
    const absences = new Map<string, Absence>()
    const out = new Map<string, MissingTopic>()
    for (const topic of missing) {
      const answer = answers.get(topic)
      const error = answer?.error === undefined ? {} : { error: answer.error }
      if (answer?.presence !== TopicPresences.ABSENT) {
        const verdict = answer?.presence === TopicPresences.UNAUTHORIZED ? MissingVerdicts.UNAUTHORIZED : MissingVerdicts.UNPROVEN
        out.set(topic, { verdict, ...error })
        continue
      }
      const before = this.#absences.get(topic)
      const absence = { count: (before?.count ?? 0) + 1, mass: mass || before?.mass === true }
      const needed = absence.mass ? ABSENT_REFRESHES_FOR_MASS_DELETION : ABSENT_REFRESHES_FOR_DELETION
      const massAbsence = absence.mass ? { massAbsence: true as const } : {}
      if (absence.count >= needed) {
        out.set(topic, { verdict: MissingVerdicts.DELETED, ...error, ...massAbsence })
      } else {
        absences.set(topic, absence)
        out.set(topic, { verdict: MissingVerdicts.ABSENT_ONCE, ...error, ...massAbsence })
      }
    }
    this.#absences = absences
    return out
  }

  /**
   * The refresh job came (back) to this instance: absences counted before, in an earlier stay here, prove nothing of
   * the present (a single absent answer then would delete), so each is counted again from its next answer.
   */
  forget (): void {
    this.#absences.clear()
    this.#massAbsence = null
  }

  /**
   * Topics the last check found deleted whose deletion was not acted on (the refresh's run was aborted first): set
   * back one absence short of it, as if this check had not taken their proof, so that a next check of the same stay
   * finds them deleted again if they are still absent. In kmirror no such check follows: a run is aborted only when
   * the refresh job leaves the instance (revoked, membership lost; a flow alone never aborts one), and the first
   * refresh of the job's next stay, here or on another instance, counts from zero (`forget`, RemoteTopics.acquired).
   * So the deletion is proven again over the usual number of refreshes, never on a count made before the job moved.
   */
  notActedOn (topics: ReadonlyMap<string, MissingTopic>): void {
    for (const [topic, missing] of topics) {
      if (missing.verdict !== MissingVerdicts.DELETED) continue
      const mass = missing.massAbsence === true
      this.#absences.set(topic, { count: (mass ? ABSENT_REFRESHES_FOR_MASS_DELETION : ABSENT_REFRESHES_FOR_DELETION) - 1, mass })
    }
  }
}
