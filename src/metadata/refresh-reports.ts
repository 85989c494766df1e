/**
 * What the topic refresh (remote-topics.ts) tells the operator: its problems (logged, listed by /status, whose
 * count the `remoteTopicProblems` gauge takes at each scrape: http/gauges.ts), its warnings, the verdicts on missing source topics, the
 * remote topics kept over a mass absence and those that could not be deleted. A refresh runs every few seconds, so each is told once.
 *
 * Invariants:
 * - A problem is logged once, again when its message changes, and at info level when it is gone; a warning the same,
 *   forgotten quietly when gone.
 * - A missing topic's verdict is logged once, again when it changes, and when the topic can be described again;
 *   most replicated topics absent at once is warned of once per such episode.
 * - A remote topic missing from the target's metadata but there is told once per episode.
 */
import type { FlowConfig } from '../config/types.ts'
import type { Logger } from '../logger.ts'
import { MissingVerdicts, type MassAbsence, type MissingTopic } from './deletion-proof.ts'
import { isKmirrorError } from '../errors.ts'
import { massAbsenceMessage, missingMessage, remoteNotDeletedMessage, remotesKeptMessage } from './missing-topic-messages.ts'
import type { RemoteNotDeleted } from './topic-sync-apply.ts'
import type { DeletedTopic, TopicProblem } from './topic-sync-plan.ts'

export class RefreshReports {
  readonly #flow: FlowConfig
  readonly #remoteName: (topic: string) => string
  readonly #log: Logger
  /** Problems logged, topic → message. */
  readonly #reported = new Map<string, string>()
  /** The last refresh's problems, as reported (`problems`). */
  #problems: readonly TopicProblem[] = []
  /** Warnings logged, topic → message. */
  readonly #warned = new Map<string, string>()
  /** Missing source topics logged, topic → verdict. */
  readonly #reportedMissing = new Map<string, string>()
  /** Most replicated topics absent at once was warned of (once per such episode). */
  #massReported = false
  /** Replicated remote topics the target's metadata left out though they exist, told at the last refresh. */
  #behind = new Set<string>()

  constructor (flow: FlowConfig, remoteName: (topic: string) => string, log: Logger) {
    this.#flow = flow
    this.#remoteName = remoteName
    this.#log = log
  }

  /** The last refresh's problems, as reported. */
  get problems (): readonly TopicProblem[] {
    return this.#problems
  }

  /** Logs each problem once, again when it changes, and when it is solved. */
  report (problems: readonly TopicProblem[]): void {
    this.#problems = problems
    for (const topic of this.#logOnce(this.#reported, problems, 'error')) this.#log.info({ topic }, 'remote topic problem solved')
  }

  /**
   * The refresh job left this instance: its problems are no longer this instance's to show (the one running the
   * job shows its own); told again, the first run after it comes back.
   */
  forgetProblems (): void {
    this.#problems = []
    this.#reported.clear()
    this.#behind.clear()
  }

  /** Logs each warning once, again when it changes; one gone is forgotten. */
  warn (warnings: readonly TopicProblem[]): void {
    this.#logOnce(this.#warned, warnings, 'warn')
  }

  /**
   * Logs each missing topic's verdict once, again when it changes, and when the topic is seen again; MASS: most
   * replicated topics absent at the last check (deletion-proof.ts), or null.
   */
  reportMissing (verdicts: ReadonlyMap<string, MissingTopic>, mass: MassAbsence | null): void {
    if (mass !== null && !this.#massReported) this.#log.warn({ absent: mass.absent, replicated: mass.replicated }, massAbsenceMessage(this.#flow, mass))
    this.#massReported = mass !== null
    for (const [topic, missing] of verdicts) {
      // Told by the mass absence's warning (its absence needs ABSENT_REFRESHES_FOR_MASS_DELETION refreshes).
      if ((mass !== null || missing.massAbsence === true) && missing.verdict === MissingVerdicts.ABSENT_ONCE) continue
      const key = `${missing.verdict} ${missing.error ?? ''}`
      if (missing.verdict === MissingVerdicts.DELETED || this.#reportedMissing.get(topic) === key) continue
      this.#reportedMissing.set(topic, key)
      const remoteTopic = this.#remoteName(topic)
      const message = missingMessage(this.#flow, topic, remoteTopic, missing)
      if (missing.verdict === MissingVerdicts.ABSENT_ONCE) this.#log.info({ topic, remoteTopic }, message)
      else this.#log.warn({ topic, remoteTopic, kafkaError: missing.error }, message)
    }
    for (const topic of [...this.#reportedMissing.keys()]) {
      if (verdicts.has(topic) && verdicts.get(topic)!.verdict !== MissingVerdicts.DELETED) continue
      this.#reportedMissing.delete(topic)
      if (!verdicts.has(topic)) this.#log.info({ topic }, `source topic ${topic} on ${this.#flow.source.alias} can be described again`)
    }
  }

  /**
   * Replicated remote topics missing from the target's metadata whose creation found them there (a broker applies
   * its controller's records in order: topics created a moment ago reach its metadata seconds later, after it made
   * the partitions of earlier ones writable): one info line per topic while it stays so, again once it was seen.
   */
  reportRemotesBehind (kept: readonly { readonly topic: string, readonly remoteTopic: string }[], skipped: ReadonlySet<string> = new Set()): void {
    // A topic an aborted refresh skipped was not looked at: its episode goes on
    const now = new Set([...this.#behind].filter(topic => skipped.has(topic)))
    for (const { topic, remoteTopic } of kept) {
      now.add(topic)
      if (this.#behind.has(topic)) continue
      this.#log.info({ topic, remoteTopic },
        `remote topic ${remoteTopic} was missing from the metadata of cluster ${this.#flow.target.alias} but exists (its metadata was behind): kept as it is, nothing is copied again`)
    }
    this.#behind = now
  }

  /**
   * Remote topics kept though `sync.topic.deletions.enabled`, their source topics' deletion proven over a mass
   * absence (deletion-proof.ts): one error line, naming how many, the cluster, and how to delete them by hand.
   */
  reportRemotesKept (deletedOnSource: readonly DeletedTopic[]): void {
    const kept = deletedOnSource.filter(d => d.remoteKeptOnPurpose === true).map(d => d.remoteTopic)
    if (kept.length > 0) this.#log.error({ remoteTopics: kept }, remotesKeptMessage(this.#flow, kept))
  }

  /**
   * Remote topics that `sync.topic.deletions.enabled` deleted with their source topic and the target did not: an
   * error line each, once (the refresh forgets their source topics), naming the Kafka error and how to delete them by
   * hand. Not a problem: nothing is copied into them any more, and nothing the refresh does again would solve it.
   */
  reportRemotesNotDeleted (notDeleted: readonly RemoteNotDeleted[]): void {
    for (const { topic, remoteTopic, error } of notDeleted) {
      const names = isKmirrorError(error) ? error.details['kafkaErrors'] : undefined
      const kafkaError = Array.isArray(names) && names.length > 0 ? { kafkaError: names.join(', ') } : {}
      this.#log.error({ topic, remoteTopic, cluster: this.#flow.target.alias, ...kafkaError }, remoteNotDeletedMessage(this.#flow, topic, remoteTopic, error))
    }
  }

  /**
   * Logs each topic's message at LEVEL once, again when it changes, keeping LOGGED (topic → message) to what is
   * current (the last entry of a topic counts); returns the topics forgotten, whose message is gone.
   */
  #logOnce (logged: Map<string, string>, entries: readonly TopicProblem[], level: 'warn' | 'error'): string[] {
    const current = new Map(entries.map(e => [e.topic, e]))
    for (const [topic, e] of current) {
      if (logged.get(topic) === e.message) continue
      logged.set(topic, e.message)
      this.#log[level]({ topic, remoteTopic: e.remoteTopic }, e.message)
    }
    const gone = [...logged.keys()].filter(topic => !current.has(topic))
    for (const topic of gone) logged.delete(topic)
    return gone
  }
}
