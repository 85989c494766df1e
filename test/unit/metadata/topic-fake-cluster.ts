/**
 * An in-memory cluster behind the admin operations topic sync uses (listTopics, describeTopics,
 * readTopicConfigs, createTopic, createPartitions, alterTopicConfigs, deleteTopics). Topic configs are
 * described as Kafka 4.1 describes them: every key, from the topic override, a dynamic broker value, or the
 * default. Every call is recorded, and any operation can be made to fail for one topic.
 */
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { ConfigSourceKind, CreateOutcome, NewTopic, TopicConfigChange, TopicConfigEntry, TopicConfigsRead, TopicDescription, TopicProbe } from '../../../src/kafka/admin-client.ts'

/** A few of Kafka 4.1's topic config defaults. */
export const BROKER_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  'cleanup.policy': 'delete',
  'retention.ms': '604800000',
  'retention.bytes': '-1',
  'max.message.bytes': '1048588',
  'delete.retention.ms': '86400000',
  'min.insync.replicas': '1',
  'message.timestamp.type': 'CreateTime',
  'segment.bytes': '1073741824'
})

interface FakeTopic {
  id: string
  partitions: number
  overrides: Map<string, string>
}

export type AdminCall = { op: string, topics: readonly string[], detail?: unknown }

export class FakeTopicCluster {
  readonly calls: AdminCall[] = []
  /** Cluster-wide dynamic values (DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG). */
  readonly dynamicBroker = new Map<string, string>()
  /** Keys described as STATIC_BROKER_CONFIG (set in server.properties). */
  readonly staticBroker = new Map<string, string>()
  /** Keys this cluster does not know (an older Kafka). */
  readonly unknownKeys = new Set<string>()
  readonly #topics = new Map<string, FakeTopic>()
  readonly #failures = new Map<string, Error>()
  readonly #refusals = new Map<string, Error>()
  readonly #racers = new Map<string, number>()
  /** Topics the principal may not DESCRIBE: left out of listings, TOPIC_AUTHORIZATION_FAILED when named. */
  readonly #denied = new Set<string>()
  readonly #configsDenied = new Set<string>()
  /** Topics left out of metadata answers though they exist (a broker whose metadata lags behind its controller). */
  readonly #lagging = new Set<string>()
  /** Partition counts answered instead of the real ones (a broker whose metadata lags behind a growth). */
  readonly #laggingCounts = new Map<string, number>()
  /** Topic ids all zeros, as brokers before Kafka 2.8 answer. */
  withoutTopicIds = false
  #nextId = 1

  /** Leaves `name` out of listings and descriptions (or, with `lagging` false, shows it again) while it exists. */
  lagMetadata (name: string, lagging = true): void {
    if (lagging) this.#lagging.add(name)
    else this.#lagging.delete(name)
  }

  /** Describes `name` with `partitions` (or, with null, with its real count again), as a broker behind a growth does. */
  lagPartitions (name: string, partitions: number | null): void {
    if (partitions === null) this.#laggingCounts.delete(name)
    else this.#laggingCounts.set(name, partitions)
  }

  /** The topic's id now (a topic deleted and created again gets a new one). */
  topicId (name: string): string | undefined {
    return this.#topics.get(name)?.id
  }

  addTopic (name: string, partitions: number, overrides: Record<string, string> = {}): void {
    this.#topics.set(name, { id: `id-${this.#nextId++}`, partitions, overrides: new Map(Object.entries(overrides)) })
  }

  /** Adds partitions, as CreatePartitions on the source does (the topic id stays). */
  growTopic (name: string, partitions: number): void {
    this.#get(name).partitions = partitions
  }

  removeTopic (name: string): void {
    this.#topics.delete(name)
  }

  /** Hides a topic from every answer, as a broker answering from stale metadata does; returns what brings it back, id and all. */
  hideTopic (name: string): () => void {
    const topic = this.#get(name)
    this.#topics.delete(name)
    return () => { this.#topics.set(name, topic) }
  }

  /** Denies (or with `denied` false, allows again) DESCRIBE on `name`, as a DENY ACL for kmirror's principal does. */
  denyDescribe (name: string, denied = true): void {
    if (denied) this.#denied.add(name)
    else this.#denied.delete(name)
  }

  /** Denies (or with `denied` false, allows again) DESCRIBE_CONFIGS on `name`. */
  denyDescribeConfigs (name: string, denied = true): void {
    if (denied) this.#configsDenied.add(name)
    else this.#configsDenied.delete(name)
  }

  has (name: string): boolean {
    return this.#topics.has(name)
  }

  partitions (name: string): number | undefined {
    return this.#topics.get(name)?.partitions
  }

  overrides (name: string): Record<string, string> {
    return Object.fromEntries(this.#topics.get(name)?.overrides ?? [])
  }

  setOverride (name: string, key: string, value: string | null): void {
    const topic = this.#get(name)
    if (value === null) topic.overrides.delete(key)
    else topic.overrides.set(key, value)
  }

  /** The next `op` ('createTopic', 'createPartitions', 'alterTopicConfigs', 'deleteTopics') on `topic` fails with `err`. */
  failNext (op: string, topic: string, err: Error): void {
    this.#failures.set(`${op}\u0000${topic}`, err)
  }

  /** Every `op` on `topic` fails with `err` (a policy or a missing grant), until called again with null. */
  failAlways (op: string, topic: string, err: Error | null): void {
    if (err === null) this.#refusals.delete(`${op}\u0000${topic}`)
    else this.#refusals.set(`${op}\u0000${topic}`, err)
  }

  /** Someone else creates `name` with `partitions` just before the next createTopic of it. */
  raceCreate (name: string, partitions: number): void {
    this.#racers.set(name, partitions)
  }

  callsOf (op: string): AdminCall[] {
    return this.calls.filter(c => c.op === op)
  }

  async listTopics (): Promise<string[]> {
    this.calls.push({ op: 'listTopics', topics: [] })
    return [...this.#topics.keys()].filter(n => !this.#denied.has(n) && !this.#lagging.has(n)).sort()
  }

  async probeTopics (names: readonly string[]): Promise<Map<string, TopicProbe>> {
    this.calls.push({ op: 'probeTopics', topics: [...names] })
    return new Map(names.map(name => [name, this.#denied.has(name)
      ? { presence: 'unauthorized', error: 'TOPIC_AUTHORIZATION_FAILED' }
      : this.#topics.has(name) ? { presence: 'exists' } : { presence: 'absent', error: 'UNKNOWN_TOPIC_OR_PARTITION' }]))
  }

  async describeTopics (names: readonly string[]): Promise<Map<string, TopicDescription>> {
    this.calls.push({ op: 'describeTopics', topics: [...names] })
    const out = new Map<string, TopicDescription>()
    for (const name of names) {
      const t = this.#topics.get(name)
      if (t !== undefined && !this.#denied.has(name) && !this.#lagging.has(name)) out.set(name, { name, id: this.withoutTopicIds ? '00000000-0000-0000-0000-000000000000' : t.id, partitions: this.#laggingCounts.get(name) ?? t.partitions })
    }
    return out
  }

  async readTopicConfigs (names: readonly string[]): Promise<TopicConfigsRead> {
    this.calls.push({ op: 'describeTopicConfigs', topics: [...names] })
    const read: TopicConfigsRead = { configs: new Map(), refused: new Map() }
    for (const name of names) {
      if (this.#configsDenied.has(name)) {
        read.refused.set(name, new KmirrorError(ErrorCodes.NOT_AUTHORIZED, `reading the configs of topic ${name} was refused (TOPIC_AUTHORIZATION_FAILED): grant DESCRIBE_CONFIGS on topic ${name}`, { details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } }))
      } else {
        read.configs.set(name, this.#describe(this.#get(name)))
      }
    }
    return read
  }

  async createTopic (topic: NewTopic): Promise<CreateOutcome> {
    this.#record('createTopic', topic.name, topic)
    const racer = this.#racers.get(topic.name)
    this.#racers.delete(topic.name)
    if (racer !== undefined) this.addTopic(topic.name, racer)
    if (this.#topics.has(topic.name)) return 'exists'
    this.addTopic(topic.name, topic.partitions, { ...topic.configs })
    return 'created'
  }

  async createPartitions (name: string, count: number): Promise<void> {
    this.#record('createPartitions', name, count)
    this.#get(name).partitions = count
  }

  async alterTopicConfigs (name: string, changes: readonly TopicConfigChange[]): Promise<void> {
    this.#record('alterTopicConfigs', name, changes)
    for (const c of changes) this.setOverride(name, c.name, c.op === 'set' ? c.value : null)
  }

  async deleteTopics (names: readonly string[]): Promise<void> {
    for (const name of names) this.#record('deleteTopics', name)
    for (const name of names) this.#topics.delete(name)
  }

  #record (op: string, topic: string, detail?: unknown): void {
    this.calls.push({ op, topics: [topic], detail })
    const refusal = this.#refusals.get(`${op}\u0000${topic}`)
    if (refusal !== undefined) throw refusal
    const failure = this.#failures.get(`${op}\u0000${topic}`)
    if (failure === undefined) return
    this.#failures.delete(`${op}\u0000${topic}`)
    throw failure
  }

  #describe (topic: FakeTopic): TopicConfigEntry[] {
    const keys = new Set([...Object.keys(BROKER_DEFAULTS), ...topic.overrides.keys()])
    const entries: TopicConfigEntry[] = []
    for (const name of [...keys].sort()) {
      if (this.unknownKeys.has(name)) continue
      const [value, source] = this.#valueOf(topic, name)
      entries.push({ name, value, source, readOnly: false, sensitive: false })
    }
    return entries
  }

  #valueOf (topic: FakeTopic, name: string): [string | null, ConfigSourceKind] {
    const override = topic.overrides.get(name)
    if (override !== undefined) return [override, 'topic']
    const dynamic = this.dynamicBroker.get(name)
    if (dynamic !== undefined) return [dynamic, 'dynamic-broker']
    const fromStatic = this.staticBroker.get(name)
    if (fromStatic !== undefined) return [fromStatic, 'static-broker']
    return [BROKER_DEFAULTS[name] ?? null, 'default']
  }

  #get (name: string): FakeTopic {
    const t = this.#topics.get(name)
    if (t === undefined) throw new Error(`the fake cluster has no topic ${name}`)
    return t
  }
}
