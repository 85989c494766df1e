/**
 * Configurations of two or more clusters under unique aliases, and the removal of everything kmirror created
 * under those aliases. Unique aliases keep one test's remote topics (`a1b2c3.orders`), heartbeat topics
 * (`a1b2c3.heartbeats`) and internal topics (`mm2-offsets.a1b2c3.internal`) apart from every other test's on
 * the shared clusters. The `heartbeats` topic itself is one per cluster, shared by all: filter its records by alias.
 *
 * Caution: MM2's cycle detection assumes one alias per cluster everywhere (KAFKA-9914). A test that runs a flow
 * out of `target` under its own alias while another test runs `A->B` under A and B, both replicating every
 * heartbeat topic (`heartbeats.replication.enabled`, on by default), ping-pongs heartbeat topics between the two
 * clusters for as long as both run (`A.b1.A.b1.A.heartbeats`...). Tests with such flows set
 * `heartbeats.replication.enabled = false` and name the heartbeat topics they want in `topics`.
 */
import { randomBytes } from 'node:crypto'
import { resolveCluster, type ClusterRef } from './clusters.ts'
import { deleteTopics, listTopics, type Cleanup } from './kafka.ts'

/** A letter (so the alias cannot be mistaken for a number) and 6 random hex characters: `a3f09c1`. */
export function uniqueAlias (letter: string): string {
  return `${letter}${randomBytes(3).toString('hex')}`
}

export interface AliasedCluster {
  readonly alias: string
  readonly cluster: ClusterRef
}

/** `clusters = ...`, each bootstrap, the enabled flows (`a->b`), replication factor 1 everywhere, then EXTRA. */
export function multiClusterProperties (clusters: readonly AliasedCluster[], flows: readonly string[], extra: readonly string[] = []): string {
  const lines = [
    `clusters = ${clusters.map(c => c.alias).join(', ')}`,
    ...clusters.map(c => `${c.alias}.bootstrap.servers = ${resolveCluster(c.cluster).bootstrap}`),
    ...flows.map(flow => `${flow}.enabled = true`),
    ...['replication.factor', 'offset-syncs.topic.replication.factor', 'checkpoints.topic.replication.factor', 'heartbeats.topic.replication.factor',
      'offset.storage.replication.factor'].map(key => `${key} = 1`),
    ...extra
  ]
  return `${lines.join('\n')}\n`
}

/**
 * Topics named after one of ALIASES: remote topics and heartbeats (`alias.*`), MM2 internal topics, and what other
 * tests' flows made of them (`A.alias.heartbeats`): the aliases are unique, so any name holding one comes from here.
 */
export function isAliasTopic (topic: string, aliases: readonly string[]): boolean {
  const parts = topic.split('.')
  return aliases.some(a => parts.includes(a))
}

/**
 * Registers, with t.after, the deletion of every topic named after ALIASES on each cluster, after STOP (which
 * should stop kmirror: a running flow would create its remote topics again).
 */
export function removeAliasTopicsAfter (t: Cleanup, clusters: readonly ClusterRef[], aliases: readonly string[], stop: () => Promise<unknown> = async () => undefined): void {
  t.after(async () => {
    await stop()
    for (const cluster of clusters) {
      const mine = (await listTopics(cluster)).filter(topic => isAliasTopic(topic, aliases))
      await deleteTopics(cluster, mine)
    }
  })
}
