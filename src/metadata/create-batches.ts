/**
 * Which remote topics are created together, one CreateTopics request per batch.
 *
 * - A batch shares one set of configs (the Kafka library sends one set for every topic of a request); partitions and
 *   replication factor may differ within it.
 * - A batch stays within CREATE_RECORD_BUDGET metadata records. A KRaft controller writes a request's topics as one
 *   atomic batch of records (a TopicRecord per topic, a PartitionRecord per partition, a ConfigRecord per config
 *   set) and refuses a request that needs more than 10,000 of them (QuorumController's MAX_RECORDS_PER_USER_OP):
 *   every topic of it gets POLICY_VIOLATION "Unable to perform excessively large batch operation". 2,000 topics of 5
 *   partitions are 12,000 records: sent in one request they were refused together, then created one request per
 *   topic (about 70 s on a 4.1 broker against 1 s in batches).
 * - A topic that alone needs more than the budget gets a batch of its own: the controller decides, and its refusal
 *   names the topic.
 * - Within a batch, and from one batch of the same configs to the next, topics keep the plan's order.
 */
import type { CreateTopicAction } from './topic-sync-plan.ts'

/**
 * A fifth below the controller's limit: room for records a later Kafka adds per topic or partition. Not lower: a
 * broker applies the controller's records in order, so the topics of a second request reach its metadata only once
 * it has made the partitions of the first writable (seconds for thousands); 1,000 topics of 5 partitions stay one.
 */
export const CREATE_RECORD_BUDGET = 8_000

/** The metadata records a KRaft controller writes to create ACTION's topic. */
export function createRecords (action: Pick<CreateTopicAction, 'partitions' | 'configs'>): number {
  return 1 + Math.max(action.partitions, 1) + Object.keys(action.configs).length
}

/** The plan's creations in batches: same configs, at most BUDGET records each (see the header). */
export function createBatches (actions: readonly CreateTopicAction[], budget = CREATE_RECORD_BUDGET): CreateTopicAction[][] {
  const byConfigs = new Map<string, CreateTopicAction[]>()
  for (const action of actions) {
    const key = JSON.stringify(Object.entries(action.configs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    const group = byConfigs.get(key)
    if (group === undefined) byConfigs.set(key, [action])
    else group.push(action)
  }
  const batches: CreateTopicAction[][] = []
  for (const group of byConfigs.values()) {
    let batch: CreateTopicAction[] = []
    let records = 0
    for (const action of group) {
      const cost = createRecords(action)
      if (batch.length > 0 && records + cost > budget) {
        batches.push(batch)
        batch = []
        records = 0
      }
      batch.push(action)
      records += cost
    }
    if (batch.length > 0) batches.push(batch)
  }
  return batches
}
