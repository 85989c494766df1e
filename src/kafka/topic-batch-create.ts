/**
 * One CreateTopics request for many topics, with each topic's own answer. Kafka creates the topics of a request one
 * by one: an answer can hold created topics beside refused ones (a topic that exists already, a controller mutation
 * quota exhausted part way, a name the principal may not create). The library rejects such an answer as a whole,
 * so the per-topic codes are read back from the error it carries.
 *
 * Invariants:
 * - No retry of the library's own: a retry would send the topics the first attempt created again, and the broker's
 *   TOPIC_ALREADY_EXISTS would then hide that this request created them. A topic answered "created" was created by
 *   this call; one answered otherwise may still have been (REQUEST_TIMED_OUT: a ZooKeeper-mode controller can write
 *   a topic after its deadline), which the caller's topic-by-topic path then finds existing.
 * - The one exception: topics refused with NOT_CONTROLLER are sent once more. A ZooKeeper-mode broker that is not
 *   the controller creates nothing; the library learns the controller from that answer (it first asks a bootstrap
 *   broker), so the second request reaches it.
 * - An answer without per-topic codes (no answer at all, a timeout, a connection lost) rejects: whether any topic
 *   was created is unknown, and the caller asks topic by topic.
 * - Every topic of the request shares one set of configs (the library sends one set for all); partitions and
 *   replication factor are each topic's own.
 */
import type { Admin } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { answerThrottleMs, kafkaErrorName, perTopicErrorCodes } from './errors.ts'

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
  /** How long the broker asked to wait before the next such request (KIP-219; a controller mutation quota), or 0. */
  readonly throttleMs: number
}

const NO_ERROR = 0
const TOPIC_ALREADY_EXISTS = 36
const NOT_CONTROLLER = kafkaErrorName(41)

/** Sends one CreateTopics for TOPICS (all with the same configs) through ADMIN, which must not retry on its own. */
export async function createTopicsOnce (admin: Admin, topics: readonly BatchTopic[]): Promise<BatchCreateResult> {
  const first = await sendOnce(admin, topics)
  const notController = topics.filter(t => first.failed.get(t.name) === NOT_CONTROLLER)
  if (notController.length === 0) return first
  const again = await sendOnce(admin, notController)
  // Every topic refused NOT_CONTROLLER was sent again: the second answer is its answer
  const failed = new Map([...first.failed].filter(([, error]) => error !== NOT_CONTROLLER))
  for (const [name, error] of again.failed) failed.set(name, error)
  return { created: [...first.created, ...again.created], exists: [...first.exists, ...again.exists], failed, throttleMs: Math.max(first.throttleMs, again.throttleMs) }
}

async function sendOnce (admin: Admin, topics: readonly BatchTopic[]): Promise<BatchCreateResult> {
  const first = topics[0]
  if (first === undefined) return { created: [], exists: [], failed: new Map(), throttleMs: 0 }
  const shared = JSON.stringify(sortedConfigs(first))
  const other = topics.find(t => JSON.stringify(sortedConfigs(t)) !== shared)
  if (other !== undefined) throw new KmirrorError(ErrorCodes.INTERNAL, `topics ${first.name} and ${other.name} differ in configs: one CreateTopics request gives all its topics the same`)
  const configs = Object.entries(first.configs).map(([name, value]) => ({ name, value }))
  try {
    await admin.createTopics({ topics: topics.map(t => ({ topic: t.name, partitions: t.partitions, replicas: t.replicationFactor })), configs })
    return { created: topics.map(t => t.name), exists: [], failed: new Map(), throttleMs: 0 }
  } catch (err) {
    const codes = perTopicErrorCodes(err)
    if (codes === undefined) throw err
    return { ...sortAnswers(topics, codes, err), throttleMs: answerThrottleMs(err) }
  }
}

function sortedConfigs (topic: BatchTopic): [string, string][] {
  return Object.entries(topic.configs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

function sortAnswers (topics: readonly BatchTopic[], codes: ReadonlyMap<string, number>, err: unknown): Omit<BatchCreateResult, 'throttleMs'> {
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
