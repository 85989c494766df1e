/**
 * Exactly-once mode on an older target release (compat-floor.test.ts, compat-zk28.test.ts): one instance copies
 * records that keep arriving on 4 partitions in many small transactions, is killed with kill -9 (most likely with
 * a transaction open) and started again, at once or only once its group is empty; then a read_committed reader of
 * the target finds every record exactly once, in source order.
 */
import assert from 'node:assert/strict'
import type { ClusterName } from './clusters.ts'
import { describeGroup } from './groups.ts'
import { assertCopiedInOrder, GROUP_SETTINGS, produceContinuously, startInstance, waitForSplit, type Instance } from './instances.ts'
import { createTopic, endOffsets, type Cleanup } from './kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from './multi-cluster.ts'
import { mm2Properties, writeTempFile } from './process.ts'
import { readCommitted } from './replication.ts'
import { uniqueName, waitFor } from './wait.ts'

const PARTITIONS = 4

export interface EosRestart {
  /** The instance started again. */
  readonly again: Instance
  /** When it was started (Date.now()). */
  readonly restartedAt: number
  /** Stops producing and checks the copy (every record once, source order); returns when read_committed saw it all. */
  readonly checkExactlyOnce: (timeoutMs: number) => Promise<number>
}

/** The scenario up to the restart; RESTART `at-once`, or `group-empty` (the coordinator dropped the dead member). */
export async function eosRestart (t: Cleanup, target: ClusterName, restart: 'at-once' | 'group-empty'): Promise<EosRestart> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('compat-eos')
  const remote = `${a}.${topic}`
  const instances: Instance[] = []
  let producer: ReturnType<typeof produceContinuously> | undefined
  // Stopped before the topics go (cleanups run in registration order)
  t.after(async () => { await producer?.stop() })
  removeAliasTopicsAfter(t, ['source', target], [a, b], async () => {
    for (const i of instances) i.process.kill('SIGKILL')
    await Promise.all(instances.map(async i => await i.process.waitForExit(10_000)))
  })
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target, sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`, `${b}.exactly.once.source.support = enabled`, ...GROUP_SETTINGS]
  }), '.properties', t)
  producer = produceContinuously(topic, PARTITIONS)
  const one = await startInstance(config, 'one', t)
  instances.push(one)
  await waitForSplit([one], PARTITIONS, `the instance owns the ${PARTITIONS} partitions`)
  const ends = await endOffsets(target, remote)
  await waitFor(async () => ({ done: (await endOffsets(target, remote)).every((e, p) => e > ends[p]! + 5n), state: ends }),
    { timeoutMs: 30_000, intervalMs: 250, message: `copying to ${target}` })

  one.process.kill('SIGKILL')
  await one.process.waitForExit(10_000)
  const group = `kmirror-${a}-${b}`
  if (restart === 'group-empty') {
    await waitFor(async () => {
      const g = await describeGroup(target, group).catch(() => undefined)
      return { done: g !== undefined && g.members === 0, state: g?.state }
    }, { timeoutMs: 30_000, intervalMs: 250, message: `group ${group} empty` })
  }
  const restartedAt = Date.now()
  const again = await startInstance(config, 'again', t)
  instances.push(again)
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the partitions')

  const checkExactlyOnce = async (timeoutMs: number): Promise<number> => {
    const rounds = await producer!.stop()
    await waitFor(async () => {
      const counts = await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readCommitted(target, remote, p)).length))
      return { done: counts.every(c => c >= rounds), state: { counts, rounds } }
    }, { timeoutMs, intervalMs: 500, message: `all ${rounds} rounds committed on ${target}` })
    const committedAt = Date.now()
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const source = await readCommitted('source', topic, partition)
      const copy = await readCommitted(target, remote, partition)
      const checked = assertCopiedInOrder(source, copy, 0, `${topic}-${partition}`)
      assert.equal(checked.duplicates, 0, `${topic}-${partition}: no record twice`)
      assert.equal(copy.length, source.length, `${topic}-${partition}`)
    }
    return committedAt
  }
  return { again, restartedAt, checkExactlyOnce }
}
