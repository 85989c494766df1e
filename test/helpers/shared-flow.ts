/**
 * One flow shared by several kmirror instances in a group, with records arriving all the time on a topic of
 * PARTITIONS partitions (a session timeout of 6 s: GROUP_SETTINGS), and the check of its copy once producing stops.
 */
import assert from 'node:assert/strict'
import { createTopic, type Cleanup } from './kafka.ts'
import { assertCopiedInOrder, flowStatus, GROUP_SETTINGS, type Instance, produceContinuously, startInstance, waitForRounds, waitForSplit } from './instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from './multi-cluster.ts'
import { writeTempFile } from './process.ts'
import { readCommitted } from './replication.ts'
import { uniqueName, waitForValue } from './wait.ts'

export const PARTITIONS = 12

export interface SharedFlow {
  readonly topic: string
  readonly remote: string
  readonly instances: Instance[]
  readonly producer: ReturnType<typeof produceContinuously>
  /** The mm2.properties every instance runs. */
  readonly config: string
  /** The flow's group id (`kmirror-<source>-<target>`). */
  readonly group: string
  /** The flow's name, `<source>-><target>`. */
  readonly flow: string
  /** The source alias. */
  readonly source: string
}

/** A topic with records arriving all the time, and two instances sharing its flow 6/6 (or COUNT instances). */
export async function sharedFlow (t: Cleanup, prefix: string, extra: (target: string) => string[] = () => [], count = 2): Promise<SharedFlow> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName(prefix)
  // Stopped before the topic is deleted (cleanups run in the order they were registered): a producer still
  // writing when a test fails early would create it again, and the deletion would wait on it
  let producer: ReturnType<typeof produceContinuously> | undefined
  t.after(async () => { await producer?.stop() })
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`],
    [`topics = ${topic}`, ...GROUP_SETTINGS, ...extra(b)]), '.properties', t)
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => {
    for (const i of instances) {
      try { process.kill(i.process.pid, 'SIGCONT') } catch { /* exited */ }
      i.process.kill('SIGKILL')
    }
    await Promise.all(instances.map(async i => await i.process.waitForExit(10_000)))
  })
  producer = produceContinuously(topic, PARTITIONS)
  for (const name of ['one', 'two'].slice(0, count)) instances.push(await startInstance(config, name, t))
  await waitForSplit(instances, PARTITIONS, `${count} instance(s) own the ${PARTITIONS} partitions evenly`)
  return { topic, remote: `${a}.${topic}`, instances, producer: producer!, config, group: `kmirror-${a}-${b}`, flow: `${a}->${b}`, source: a }
}

/** The partitions INSTANCE copies now (by number); asked again while its /status does not answer in time. */
export async function partitionsOf (instance: Instance): Promise<Set<number>> {
  const status = await waitForValue(async () => {
    const read = await flowStatus(instance)
    return { done: read !== null, state: read }
  }, { timeoutMs: 15_000, intervalMs: 250, message: `${instance.name} answering /status` })
  return new Set(status!.partitions.map(p => p.partition))
}

/** Stops producing, waits until the target has every round, checks each partition; returns rewinds per partition. */
export async function checkCopy (setup: SharedFlow, maxRewinds: (partition: number) => number): Promise<number[]> {
  const rounds = await setup.producer.stop()
  await waitForRounds('target', setup.remote, rounds, 30_000)
  const rewinds: number[] = []
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const source = await readCommitted('source', setup.topic, partition)
    const copy = await readCommitted('target', setup.remote, partition)
    const checked = assertCopiedInOrder(source, copy, maxRewinds(partition), `${setup.topic}-${partition}`)
    if (maxRewinds(partition) === 0) assert.equal(checked.duplicates, 0, `${setup.topic}-${partition}: copied by the survivor only, no record twice`)
    rewinds.push(checked.rewinds)
  }
  return rewinds
}
