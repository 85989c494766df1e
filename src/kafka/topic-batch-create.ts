/**
 * One CreateTopics request for many topics, with each topic's own answer. Kafka creates the topics of a request one
 * by one: an answer can hold created topics beside refused ones (a topic that exists already, a controller mutation
 * quota exhausted part way, a name the principal may not create). The library rejects such an answer as a whole,
 * so the per-topic codes are read back from the error it carries.
 *
 * Invariants:
 * - One attempt, no retry of the library's own: a retry would send the topics the first attempt created again, and
 *   the broker's TOPIC_ALREADY_EXISTS would then hide that this request created them. "created" is exact.
 * - An answer without per-topic codes (no answer at all, a timeout, a connection lost) rejects: whether any topic
 *   was created is unknown, and the caller asks topic by topic.
 * - Every topic of the request shares one set of configs (the library sends one set for all); partitions and
 *   replication factor are each topic's own.
 */
import type { Admin } from '@platformatic/kafka'
import { kafkaErrorName, perTopicErrorCodes } from './errors.ts'

/** A topic to create, as `AdminClient.createTopics` takes it. */
export interface BatchTopic {
  readonly name: string
  readonly partitions: number
  /** -1 = the broker's default. */
  readonly replicationFactor: number
  readonly configs: Readonly<Record<string, string>>
}

/** What the broker answered for each topic of one request. */
export interface BatchCreateResult {
  readonly created: readonly string[]
  /** Topics that existed before the request (TOPIC_ALREADY_EXISTS). */
  readonly exists: readonly string[]
  /** Topics refused for another reason, with the Kafka error name of their answer. */
  readonly failed: ReadonlyMap<string, string>
}

const NO_ERROR = 0
const TOPIC_ALREADY_EXISTS = 36

/** Sends one CreateTopics for TOPICS (all with the same configs) through ADMIN, which must not retry on its own. */
export async function createTopicsOnce (admin: Admin, topics: readonly BatchTopic[]): Promise<BatchCreateResult> {
  const first = topics[0]
  if (first === undefined) return { created: [], exists: [], failed: new Map() }
  const configs = Object.entries(first.configs).map(([name, value]) => ({ name, value }))
  try {
    await admin.createTopics({ topics: topics.map(t => ({ topic: t.name, partitions: t.partitions, replicas: t.replicationFactor })), configs })
    return { created: topics.map(t => t.name), exists: [], failed: new Map() }
  } catch (err) {
    const codes = perTopicErrorCodes(err)
    if (codes === undefined) throw err
    return sortAnswers(topics, codes, err)
  }
}

function sortAnswers (topics: readonly BatchTopic[], codes: ReadonlyMap<string, number>, err: unknown): BatchCreateResult {
  const created: string[] = []
  const exists: string[] = []
  const failed = new Map<string, string>()
  for (const { name } of topics) {
    const code = codes.get(name)
    if (code === NO_ERROR) created.push(name)
    else if (code === TOPIC_ALREADY_EXISTS) exists.push(name)
    // A topic the answer leaves out is not known to be created: asked again on its own.
    else failed.set(name, code === undefined ? `no answer (${err instanceof Error ? err.message : String(err)})` : kafkaErrorName(code))
  }
  return { created, exists, failed }
}
