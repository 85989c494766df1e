/**
 * Finds the source topics a flow replicates and makes sure each has its remote topic on the target:
 * created with the source's partition count, `replication.factor` and the source's topic configs minus
 * exclusions, or grown when it has fewer partitions than the source. One topic's failure is reported and
 * never stops the others.
 */
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient, TopicConfigEntry } from '../kafka/admin-client.ts'
import type { Logger } from '../logger.ts'
import { compileJavaRegexList } from '../policy/java-regex.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { shouldReplicateTopic } from '../policy/should-replicate.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'

export interface ReplicatedTopic {
  readonly source: string
  readonly remote: string
  readonly partitions: number
}

export interface TopicProblem {
  readonly topic: string
  readonly message: string
}

export interface RefreshResult {
  readonly topics: readonly ReplicatedTopic[]
  readonly created: readonly string[]
  readonly grown: readonly string[]
  readonly problems: readonly TopicProblem[]
}

/** The source configs MM2 copies when it creates a remote topic: set explicitly, writable, not secret, not excluded. */
export function selectTopicConfigs (entries: readonly TopicConfigEntry[], exclude: RegExp | null): Record<string, string> {
  const out: Record<string, string> = {}
  for (const e of entries) {
    if (e.value === null || e.readOnly || e.sensitive) continue
    if (e.source !== 'topic' && e.source !== 'dynamic-broker') continue
    if (exclude?.test(e.name) === true) continue
    out[e.name] = e.value
  }
  return out
}

export class RemoteTopics {
  readonly #flow: FlowConfig
  readonly #policy: ReplicationPolicy
  readonly #source: AdminClient
  readonly #target: AdminClient
  readonly #log: Logger
  readonly #shouldReplicate: (topic: string) => boolean
  readonly #configExclude: RegExp | null

  constructor (flow: FlowConfig, policy: ReplicationPolicy, sourceAdmin: AdminClient, targetAdmin: AdminClient, log: Logger) {
    this.#flow = flow
    this.#policy = policy
    this.#source = sourceAdmin
    this.#target = targetAdmin
    this.#log = log
    const filter = createTopicFilter({ topics: flow.topics, topicsExclude: flow.topicsExclude })
    this.#shouldReplicate = topic => shouldReplicateTopic(topic, {
      filter, policy, targetAlias: flow.target.alias, heartbeatsReplicationEnabled: flow.heartbeatsReplicationEnabled
    })
    this.#configExclude = compileJavaRegexList(flow.configPropertiesExclude)
  }

  async refresh (): Promise<RefreshResult> {
    const names = (await this.#source.listTopics()).filter(this.#shouldReplicate).sort()
    const sources = await this.#source.describeTopics(names)
    const remoteNames = names.map(n => this.#policy.formatRemoteTopic(this.#flow.source.alias, n))
    const remotes = await this.#target.describeTopics(remoteNames)
    const topics: ReplicatedTopic[] = []
    const created: string[] = []
    const grown: string[] = []
    const problems: TopicProblem[] = []
    const missing = names.filter((_, i) => !remotes.has(remoteNames[i]!))
    const configs = await this.#source.describeTopicConfigs(missing)
    for (const [i, name] of names.entries()) {
      const source = sources.get(name)
      if (source === undefined) continue
      const remote = remoteNames[i]!
      try {
        const state = await this.#ensureRemote(name, remote, source.partitions, remotes.get(remote)?.partitions, configs.get(name) ?? [])
        if (state === 'created') created.push(remote)
        if (state === 'grown') grown.push(remote)
        topics.push({ source: name, remote, partitions: source.partitions })
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        problems.push({ topic: name, message })
        this.#log.error({ topic: name, remoteTopic: remote, err }, 'cannot prepare the remote topic; its records are not replicated until this is fixed')
      }
    }
    return { topics, created, grown, problems }
  }

  async #ensureRemote (name: string, remote: string, partitions: number, remotePartitions: number | undefined, configs: readonly TopicConfigEntry[]): Promise<'created' | 'grown' | 'ok'> {
    if (remotePartitions === undefined) {
      const outcome = await this.#target.createTopic({
        name: remote, partitions, replicationFactor: this.#flow.replicationFactor, configs: selectTopicConfigs(configs, this.#configExclude)
      })
      this.#log.info({ topic: name, remoteTopic: remote, partitions, outcome }, 'created remote topic')
      return outcome === 'created' ? 'created' : 'ok'
    }
    if (remotePartitions < partitions) {
      await this.#target.createPartitions(remote, partitions)
      this.#log.info({ topic: name, remoteTopic: remote, from: remotePartitions, to: partitions }, 'grew remote topic')
      return 'grown'
    }
    return 'ok'
  }
}
