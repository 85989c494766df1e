/**
 * Exactly-once mode on an older target release (compat-floor.test.ts, compat-zk28.test.ts): one instance copies
 * records that keep arriving on 4 partitions in many small transactions, is killed with kill -9 (most likely with
 * a transaction open) and started again, at once or only once its group is empty; then a read_committed reader of
 * the target finds every record exactly once, in source order.
 */
import type { ClusterName } from './clusters.ts'
import { describeGroup } from './groups.ts'
import { checkExactlyOnceCopy, GROUP_SETTINGS, killWithTransactionOpen, produceContinuously, startInstance, waitForSplit, type Instance } from './instances.ts'
import { createTopic, endOffsets, type Cleanup } from './kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from './multi-cluster.ts'
import { mm2Properties, writeTempFile } from './process.ts'
import { uniqueName, waitFor } from './wait.ts'

const PARTITIONS = 4

export interface EosRestart {
  /** The instance started again. */
  readonly again: Instance
  /** The instance killed. */
  readonly killed: Instance
  /** When it was started (Date.now()). */
  readonly restartedAt: number
  /** When the killed one had exited (Date.now()). */
  readonly killedAt: number
  /** The remote topic's end offsets read right after that. */
  readonly endsAtKill: readonly bigint[]
  /** The remote topic on the target. */
  readonly remote: string
  /** The mm2.properties file both ran. */
  readonly config: string
  /** The flow's group. */
  readonly group: string
  /** Stops producing and checks the copy (every record once, source order); returns when read_committed saw it all. */
  readonly checkExactlyOnce: (timeoutMs: number) => Promise<number>
}

/**
 * The scenario up to the restart; RESTART `at-once`, or `group-empty` (the coordinator dropped the dead member).
 * EXTRA: more lines of the configuration, given the target's alias.
 */
export async function eosRestart (t: Cleanup, target: ClusterName, restart: 'at-once' | 'group-empty', extra: (target: string) => string[] = () => []): Promise<EosRestart> {
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
    source: 'source', target, sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`, `${b}.exactly.once.source.support = enabled`, ...GROUP_SETTINGS, ...extra(b)]
  }), '.properties', t)
  producer = produceContinuously(topic, PARTITIONS)
  const one = await startInstance(config, 'one', t)
  instances.push(one)
  await waitForSplit([one], PARTITIONS, `the instance owns the ${PARTITIONS} partitions`)
  const ends = await endOffsets(target, remote)
  await waitFor(async () => ({ done: (await endOffsets(target, remote)).every((e, p) => e > ends[p]! + 5n), state: ends }),
    { timeoutMs: 30_000, intervalMs: 250, message: `copying to ${target}` })

  // (at once: as soon as a transaction of it is seen open, so that the new one has one to fence; once the group is
  // empty: at a random moment, as the transaction timeout would otherwise hold every such run 20 s)
  if (restart === 'at-once') await killWithTransactionOpen(one, target, remote)
  else {
    one.process.kill('SIGKILL')
    await one.process.waitForExit(10_000)
  }
  const killedAt = Date.now()
  const endsAtKill = await endOffsets(target, remote)
  const group = `kmirror-${a}-${b}`
  if (restart === 'group-empty') {
    await waitFor(async () => {
      const g = await describeGroup(target, group).catch(() => undefined)
      return { done: g !== undefined && g.members === 0, state: g?.state }
    }, { timeoutMs: 30_000, intervalMs: 250, message: `group ${group} empty` })
  }
  const restartedAt = Date.now()
  const again = await startInstance(config, 'again', t, [], { started: false })
  instances.push(again)
  // (a dead member whose session ended before this one joined, as on a loaded machine, is not listed to fence; a
  // target before Kafka 3.0 cannot list open transactions either, so its transaction holds the start until its
  // timeout, 60 s: the start is waited for longer than that)
  await again.process.waitForOutput(/"msg":"kmirror started"/, 120_000)
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the partitions')

  const checkExactlyOnce = async (timeoutMs: number): Promise<number> =>
    await checkExactlyOnceCopy({ cluster: 'source', topic }, { cluster: target, topic: remote }, PARTITIONS, await producer!.stop(), timeoutMs)
  return { again, killed: one, restartedAt, killedAt, endsAtKill, remote, config, group, checkExactlyOnce }
}
