/**
 * An instance of two that dies or freezes (issue 11), with records arriving all the time on a topic of 12
 * partitions and a session timeout of 6 s:
 * - kill -9: the other resumes its partitions within the session timeout and a few seconds, nothing is missing and
 *   each partition stays in source order (it may go back once, to the dead one's last stored position);
 * - SIGSTOP past the session timeout: the other takes everything over; after SIGCONT the frozen one writes nothing
 *   more to the partitions it lost (each stays in source order with at most the one rewind of the takeover, and none
 *   past the target's end at SIGCONT), logs that it lost its membership, joins again and gets work again; in
 *   exactly-once mode its open transaction never becomes visible (every record exactly once), and the thawed one
 *   ends the producer of its lost membership and copies what it is assigned again with a new one;
 * - exactly-once mode, kill -9 of one of two: a read_committed reader finds every record exactly once (the leader
 *   fenced the dead member's transactional id before handing its partitions over; its open transaction aborted);
 * - exactly-once mode, a lone instance killed with kill -9 and started again at once: the new one fences the dead
 *   one's transactional id at its first rebalance (the dead one was still listed in the group when it started), so
 *   read_committed readers see every record within seconds, not at the transaction timeout (60 s);
 * - exactly-once mode, a lone instance killed with a transaction open and started again once the coordinator
 *   dropped it (the group empty, nobody to name it): the new one lists the open transactions under the group's id
 *   prefix on the target, fences the dead one's, and read_committed readers see every record before that
 *   transaction's timeout; a live member of another group whose id starts with this one's (`<group>-x`), frozen
 *   with a transaction open on the same source's topics, is left alone (its group exists).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ClusterClients } from '../../src/kafka/cluster-clients.ts'
import type { OpenTransaction } from '../../src/kafka/open-transactions.ts'
import { getCluster } from '../helpers/clusters.ts'
import { describeGroup } from '../helpers/groups.ts'
import { createTopic, endOffsets } from '../helpers/kafka.ts'
import { readBatches } from '../helpers/kafka-read.ts'
import { assertEndedWellBeforeTimeout, checkExactlyOnceCopy, describeEnd, flowStatus, type Instance, killWithTransactionOpen, nothingToFence, openAtKillEnded, produceContinuously, roundOf, startInstance, waitForSplit } from '../helpers/instances.ts'
import { writeTempFile } from '../helpers/process.ts'
import { readCommitted, type ReadRecord } from '../helpers/replication.ts'
import { checkCopy, PARTITIONS, partitionsOf, sharedFlow, type SharedFlow } from '../helpers/shared-flow.ts'
import type { Cleanup } from '../helpers/kafka.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const bigints = (_key: string, value: unknown): unknown => typeof value === 'bigint' ? value.toString() : value

test('kill -9 of one of two instances: the other resumes its partitions within the session timeout, nothing missing, source order kept', { timeout: 90_000 }, async t => {
  // Given two instances sharing a flow 6/6 while records keep arriving
  const setup = await sharedFlow(t, 'kill9')
  const [one, two] = setup.instances
  const lost = await partitionsOf(two!)
  assert.equal(lost.size, 6)

  // When one of them is killed (kill -9)
  const killedAt = Date.now()
  two!.process.kill('SIGKILL')
  await two!.process.waitForExit(10_000)

  // Then the other owns all 12 partitions within session timeout (6 s) + a few seconds
  await waitForSplit([one!], PARTITIONS, 'the survivor owns all 12 partitions')
  const takeoverMs = Date.now() - killedAt
  assert.ok(takeoverMs < 20_000, `the survivor resumed the dead one's partitions after ${takeoverMs} ms`)
  t.diagnostic(`takeover ${takeoverMs} ms after the kill -9 (session timeout 6000 ms)`)

  // And nothing is missing: each partition in source order, the dead one's going back at most once
  const ends = await endOffsets('target', setup.remote)
  await waitFor(async () => {
    const now = await endOffsets('target', setup.remote)
    return { done: [...lost].every(p => now[p]! > ends[p]!), state: { ends, now } }
  }, { timeoutMs: 20_000, intervalMs: 250, message: 'the survivor copies the dead one\'s partitions' })
  await checkCopy(setup, partition => lost.has(partition) ? 1 : 0)
  one!.process.kill('SIGTERM')
  assert.equal((await one!.process.waitForExit(15_000)).code, 0, one!.process.stderr.slice(-3000))
})

/**
 * Exactly-once mode: once the producer stops, a read_committed reader finds every source record of every partition
 * on the target exactly once, in source order (0 missing, 0 duplicates, no rewind). Returns when every round was
 * seen committed (before the record-by-record check, whose reads take a while).
 */
async function checkExactlyOnce (setup: SharedFlow): Promise<number> {
  return await checkExactlyOnceCopy({ cluster: 'source', topic: setup.topic }, { cluster: 'target', topic: setup.remote }, PARTITIONS, await setup.producer.stop(), 30_000)
}

/**
 * Asserts that from target offset FROM on (the end of the target when the frozen instance was let go on) the copy
 * runs on in source order without going back: a write of the zombie after SIGCONT would re-append records the
 * survivor had already copied (a rewind past FROM).
 */
function assertNoRewindFrom (copy: readonly ReadRecord[], from: bigint, label: string): void {
  const last = copy.findLastIndex(r => r.offset < from)
  const tail = copy.slice(Math.max(last, 0)).map(roundOf)
  for (let i = 1; i < tail.length; i++) {
    assert.equal(tail[i], tail[i - 1]! + 1, `${label}: after SIGCONT (target offset ${from} on) the copy goes from round ${tail[i - 1]} to ${tail[i]}: a write of the zombie`)
  }
}

/**
 * One of two instances frozen (SIGSTOP) past its session timeout while the other takes its partitions over and
 * copies them on, then let go on (SIGCONT). Returns the setup, the frozen one's partitions and the target's end
 * offsets just before SIGCONT.
 */
async function freezeAndThaw (t: Cleanup, prefix: string, extra?: (target: string) => string[]): Promise<{ setup: SharedFlow, frozen: Set<number>, beforeThaw: bigint[] }> {
  // Given two instances sharing a flow 6/6 while records keep arriving
  const setup = await sharedFlow(t, prefix, extra)
  const [one, two] = setup.instances
  const frozen = await partitionsOf(two!)
  assert.equal(frozen.size, 6)

  // When one of them is frozen past the session timeout, and the other has taken over and copies its partitions
  process.kill(two!.process.pid, 'SIGSTOP')
  await waitForSplit([one!], PARTITIONS, 'the live instance owns all 12 partitions')
  const atTakeover = await endOffsets('target', setup.remote)
  await waitFor(async () => {
    const now = await endOffsets('target', setup.remote)
    return { done: [...frozen].every(p => now[p]! > atTakeover[p]! + 5n), state: { atTakeover, now } }
  }, { timeoutMs: 20_000, intervalMs: 250, message: 'the live instance copies the frozen one\'s partitions' })

  // And it is let go on (SIGCONT)
  const beforeThaw = await endOffsets('target', setup.remote)
  process.kill(two!.process.pid, 'SIGCONT')

  // Then it logs that it lost its membership, joins again and gets work again
  await two!.process.waitForOutput(/"msg":"group membership lost: stopping all work at once, joining again as a new member"/, 20_000)
  await waitForSplit(setup.instances, PARTITIONS, 'the two share the partitions 6/6 again').catch(err => {
    // (the thawed instance's own account of why it has no work, for whoever reads a failing run)
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nthe thawed instance's last log lines:\n${two!.process.stderr.slice(-6000)}`)
  })
  return { setup, frozen, beforeThaw }
}

test('SIGSTOP zombie: after SIGCONT it writes nothing to the partitions it lost, logs the lost membership, joins again and gets work', { timeout: 90_000 }, async t => {
  const { setup, frozen, beforeThaw } = await freezeAndThaw(t, 'zombie')

  // And the partitions it lost stay in source order: one rewind at most (the takeover, before SIGCONT), no zombie
  // write after it
  await checkCopy(setup, partition => frozen.has(partition) ? 1 : 0)
  for (const partition of frozen) {
    assertNoRewindFrom(await readCommitted('target', setup.remote, partition), beforeThaw[partition]!, `${setup.topic}-${partition}`)
  }
  for (const i of setup.instances) i.process.kill('SIGTERM')
  for (const i of setup.instances) assert.equal((await i.process.waitForExit(15_000)).code, 0, i.process.stderr.slice(-3000))
})

test('exactly-once SIGSTOP zombie: its open transaction never becomes visible, a read_committed reader finds every record exactly once; thawed, it copies again with a new producer', { timeout: 120_000 }, async t => {
  const { setup } = await freezeAndThaw(t, 'eos-zombie', target => [`${target}.exactly.once.source.support = enabled`])
  const [one, two] = setup.instances

  // Then the live one fenced the frozen one's transactional id before copying its partitions
  assert.match(one!.process.stderr, /"msg":"fencing the transactional ids of members that left work behind"/)

  // And every partition holds every committed record exactly once, in source order: 0 missing, 0 duplicates (the
  // thawed one copies the 6 partitions it got again, with a new producer of its transactional id)
  await checkExactlyOnce(setup)

  // And the thawed one said that the producer of its lost membership ended, and never stopped replicating
  assert.match(two!.process.stderr, /"msg":"group membership lost: the transactional producer of that membership is ended/)
  assert.doesNotMatch(two!.process.stderr, /cannot recover/)
  for (const i of setup.instances) i.process.kill('SIGTERM')
  for (const i of setup.instances) assert.equal((await i.process.waitForExit(15_000)).code, 0, i.process.stderr.slice(-3000))
})

test('exactly-once: kill -9 of one of two instances, a read_committed reader finds every record exactly once', { timeout: 90_000 }, async t => {
  // Given two instances sharing a flow 6/6 in exactly-once mode while records keep arriving
  const setup = await sharedFlow(t, 'eos-kill9', target => [`${target}.exactly.once.source.support = enabled`])
  const [one, two] = setup.instances
  const lost = await partitionsOf(two!)

  // When one of them is killed (kill -9) mid-copy
  two!.process.kill('SIGKILL')
  await two!.process.waitForExit(10_000)

  // Then the other owns all 12 partitions, after fencing the dead one's transactional id
  await waitForSplit([one!], PARTITIONS, 'the survivor owns all 12 partitions')
  assert.match(one!.process.stderr, /"msg":"fencing the transactional ids of members that left work behind"/)
  const ends = await endOffsets('target', setup.remote)
  await waitFor(async () => {
    const now = await endOffsets('target', setup.remote)
    return { done: [...lost].every(p => now[p]! > ends[p]! + 5n), state: { ends, now } }
  }, { timeoutMs: 20_000, intervalMs: 250, message: 'the survivor copies the dead one\'s partitions' })

  // And every partition holds every committed record exactly once, in source order: 0 missing, 0 duplicates
  await checkExactlyOnce(setup)
  one!.process.kill('SIGTERM')
  assert.equal((await one!.process.waitForExit(15_000)).code, 0, one!.process.stderr.slice(-3000))
})

test('exactly-once: a lone instance killed with kill -9 and restarted at once: the new one fences the dead one\'s transactional id at its first rebalance, so read_committed readers wait well under the transaction timeout', { timeout: 90_000 }, async t => {
  // Given one instance in exactly-once mode copying records that keep arriving, in many small transactions
  const setup = await sharedFlow(t, 'eos-restart', target => [`${target}.exactly.once.source.support = enabled`], 1)
  const [one] = setup.instances
  const ends = await endOffsets('target', setup.remote)
  await waitFor(async () => ({ done: (await endOffsets('target', setup.remote)).every((e, p) => e > ends[p]! + 5n), state: ends }),
    { timeoutMs: 20_000, intervalMs: 250, message: 'copying' })

  // When it is killed with kill -9 (as soon as a transaction of it is seen open) and started again at once
  const openSeen = await killWithTransactionOpen(one!, 'target', setup.remote)
  const killedAt = Date.now()
  const endsAtKill = await endOffsets('target', setup.remote)
  const restartedAt = Date.now()
  const again = await startInstance(setup.config, 'again', t)
  setup.instances.push(again)

  // Then the new instance, leading its first generation, fences the transactional id the dead one's group
  // membership named (still listed when it started: its session had not ended). Unless the dead one had lost its
  // membership just before the kill (a busy machine: its producer ended with it, and a member killed while joining
  // again is not listed): then there is nothing of it to fence.
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the 12 partitions')
  const fenced = /"msg":"fencing the transactional ids of members that left work behind"/.test(again.process.stderr)
  const why = fenced ? null : nothingToFence(one!, again, setup.group)
  if (why === 'lost') t.diagnostic('the killed instance had lost its membership before the kill: nothing of it listed to fence')
  else if (why === 'session-ended') {
    // A loaded machine took longer than the session timeout (6 s) to start the new instance: the coordinator had
    // already dropped the dead member (seen in CI), so no generation lists it to fence
    t.diagnostic('the dead member\'s session had ended before the new instance joined: nothing of it listed to fence')
  } else assert.ok(fenced, `no fencing line; the restarted instance:\n${again.process.stderr.slice(-3000)}`)

  // And a read_committed reader finds every record exactly once
  const visibleMs = await checkExactlyOnce(setup) - restartedAt
  // And the transaction the dead one left open ended well before the transaction timeout (60 s) would have aborted
  // it, told by its markers' own times from the kill (which include starting a Node process on a loaded machine),
  // not by when the test's reader saw every record
  const ended = await openAtKillEnded('target', setup.remote, endsAtKill)
  assertEndedWellBeforeTimeout(ended, killedAt)
  t.diagnostic(`every record visible ${visibleMs} ms after the restart; ${describeEnd(ended, killedAt)}${openSeen ? '' : ' (none seen open before the kill)'} (session timeout 6000 ms, transaction timeout 60000 ms)`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})

test('exactly-once: a lone instance killed with a transaction open and started again once its session ended (the group empty): the new one finds the open transaction on the target and fences it (and not a live transaction of group <group>-x): that transaction ends well before its timeout; a start held by the other group\'s open transaction says so', { timeout: 120_000 }, async t => {
  // Given one instance in exactly-once mode copying records that keep arriving, in many small transactions
  const setup = await sharedFlow(t, 'eos-orphan', target => [`${target}.exactly.once.source.support = enabled`], 1)
  const [one] = setup.instances
  const target = new ClusterClients({ alias: 'B', bootstrapServers: [getCluster('target').bootstrap], consumer: {}, producer: { 'bootstrap.servers': getCluster('target').bootstrap }, admin: {} }, 'orphan-test', 'target')
  t.after(() => target.close())
  const prefix = `${setup.group}-`
  // And another group whose id starts with this one's (`<group>-x`), copying another topic of the same source in
  // exactly-once mode: its transactional ids have the same prefix and its topics pass the topic check. Its session
  // timeout is 60 s, so frozen below it stays a live member of its group.
  let otherProducer: ReturnType<typeof produceContinuously> | undefined
  t.after(async () => { await otherProducer?.stop() })
  const otherTopic = uniqueName('eos-orphan-other')
  await createTopic('source', otherTopic, { partitions: 1, t })
  const otherProperties = readFileSync(setup.config, 'utf8').replace(`topics = ${setup.topic}`, `topics = ${otherTopic}`).replace('session.timeout.ms = 6000', 'session.timeout.ms = 60000')
  const otherConfig = writeTempFile(`${otherProperties}${setup.flow}.group.id = ${prefix}x\n`, '.properties', t)
  otherProducer = produceContinuously(otherTopic, 1)
  const other = await startInstance(otherConfig, 'other', t)
  setup.instances.push(other)
  await waitForSplit([other], 1, 'the other group copies its topic')

  // When both are frozen with a transaction open (SIGSTOP, and thawed and frozen again until one is), and the
  // first is killed. A request written just before a freeze may still reach the broker (an EndTxn, an
  // AddPartitionsToTxn): a transaction counts as open once two listings a moment apart show it the same.
  const openNow = async (): Promise<OpenTransaction[]> => (await target.openTransactions(prefix))?.open ?? []
  const openOf = async (i: Instance): Promise<OpenTransaction[]> => (await openNow()).filter(o => o.transactionalId.split(':').at(-2) === String(i.process.pid))
  const frozenOpen = async (i: Instance): Promise<OpenTransaction> => {
    let last = ''
    return (await waitForValue(async () => {
      process.kill(i.process.pid, 'SIGSTOP')
      const now = await openOf(i)
      const settled = now.length === 1 && JSON.stringify(now, bigints) === last
      last = JSON.stringify(now, bigints)
      // Nothing open at this freeze: let it run a moment and freeze it again
      if (now.length === 0) process.kill(i.process.pid, 'SIGCONT')
      return { done: settled, state: now[0] }
    }, { timeoutMs: 30_000, intervalMs: 200, message: `${i.name} frozen with a transaction open` }))!
  }
  const othersOpen = await frozenOpen(other)
  const othersFrozenAt = Date.now()
  await frozenOpen(one!)
  one!.process.kill('SIGKILL')
  await one!.process.waitForExit(10_000)
  const [orphan] = await openOf(one!)
  assert.ok(orphan !== undefined, 'the dead one\'s transaction is open')
  // and started again only once the coordinator dropped it (session timeout 6 s): no member is left to name it
  await waitFor(async () => {
    const group = await describeGroup('target', setup.group).catch(() => undefined)
    return { done: group !== undefined && group.members === 0, state: group?.state }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'the group empty' })
  const again = await startInstance(setup.config, 'again', t, [], { started: false })
  setup.instances.push(again)

  // Then the new instance finds the dead one's open transaction and, leading the first generation, fences it
  await again.process.waitForOutput(/"msg":"fencing the transactional ids of members that left work behind"/, 60_000)
  const found = again.process.stderr.split('\n').filter(l => l.includes('"msg":"found a transaction left open by a member gone from the group')).map(l => JSON.parse(l) as { transactionalId: string, topics: string[] })
  assert.deepEqual(found.map(f => f.transactionalId), [orphan.transactionalId], again.process.stderr.slice(-3000))
  assert.deepEqual(found[0]!.topics, orphan.topics)
  const fencing = again.process.stderr.split('\n').find(l => l.includes('"msg":"fencing the transactional ids of members that left work behind"'))
  assert.ok(fencing !== undefined && (JSON.parse(fencing) as { transactionalIds: string[] }).transactionalIds.includes(orphan.transactionalId), fencing)
  // (the line is logged as the fence begins: its InitProducerId and the abort that follows may still be under way)
  await waitFor(async () => !(await openNow()).some(o => o.transactionalId === orphan.transactionalId),
    { timeoutMs: 20_000, message: 'the dead one\'s transaction is no longer open' })
  // and leaves the other group's transaction alone: no line names it, and while within its timeout (60 s; a loaded
  // machine may get here later, when its coordinator has aborted it for its age) it is still open under the same
  // producer epoch (not fenced)
  assert.ok(!again.process.stderr.includes(othersOpen.transactionalId), 'the other group\'s id is neither found nor fenced')
  const othersNow = (await openOf(other)).map(o => [o.transactionalId, o.producerEpoch])
  if (Date.now() - othersFrozenAt < 55_000) assert.deepEqual(othersNow, [[othersOpen.transactionalId, othersOpen.producerEpoch]])
  else if (othersNow.length > 0) assert.deepEqual(othersNow, [[othersOpen.transactionalId, othersOpen.producerEpoch]])
  else t.diagnostic('the other group\'s transaction had reached its timeout (aborted by its coordinator) before the check')
  // And when the other group's frozen transaction holds a partition of the internal topics both groups write (the
  // same source alias to the same target: one progress topic, one history topic), the new instance's start waits
  // for it, as it must (progress committed behind it counts), and says which topic and partition hold it
  const progressed = await again.process.waitForOutput(/"msg":"kmirror started"|"msg":"reading (\S+) on cluster \S+ waits for a transaction still open there \(partition (\d+)/, 60_000)
  if (progressed[1] !== undefined) {
    assert.match(progressed[1], /^mm2-offset(s|-history)\.[^.]+\.internal$/, progressed[0])
    t.diagnostic(`the start waited on the other group's transaction, holding ${progressed[1]} partition ${progressed[2]}`)
    // and /status shows the wait too, while it lasts (the other group is still frozen, its transaction within its
    // timeout: a loaded machine may get here once its coordinator aborted it)
    const held = (await flowStatus(again))?.heldReads ?? []
    if (Date.now() - othersFrozenAt < 55_000) assert.ok(held.some(r => r.topic === progressed[1] && r.cluster === setup.flow.split('->')[1] && r.partitions.some(p => p.partition === Number(progressed[2]))), JSON.stringify(held))
  }
  process.kill(other.process.pid, 'SIGCONT')
  await otherProducer.stop()
  otherProducer = undefined
  await again.process.waitForOutput(/"msg":"kmirror started"/, 60_000)
  if (progressed[1] !== undefined) await again.process.waitForOutput(new RegExp(`"msg":"reading ${progressed[1].replace(/\./g, '\\.')} on cluster \\S+ no longer waits: the transaction that held it ended \\(the read took`), 10_000)
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the 12 partitions')

  // And that transaction was ended by the fencing, before the coordinator would have aborted it at its timeout (60 s
  // after it began): its ABORT markers on the remote topic (those past its epoch: the ones before end its committed
  // transactions) were written before then, so read_committed readers waited less. Told by the markers' own times,
  // not by when the test's reader saw every record: on a loaded machine copying the backlog of the frozen minutes
  // took that past 60 s (seen in CI).
  const markers = (await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => await readBatches('target', setup.remote, p))))
    .flat().filter(b => b.isControl && b.producerId === orphan.producerId && b.producerEpoch > orphan.producerEpoch)
  assert.ok(markers.length > 0 && markers.every(m => m.isAbortMarker), `the dead one's transaction ended by ABORT markers on ${setup.remote}: ${JSON.stringify(markers, bigints)}`)
  const endedAfterMs = Math.max(...markers.map(m => Number(m.maxTimestamp))) - orphan.startedAt
  assert.ok(endedAfterMs < orphan.timeoutMs, `the dead one's transaction aborted ${endedAfterMs} ms after it began, not before its timeout (${orphan.timeoutMs} ms)`)
  // And a read_committed reader finds every record exactly once
  const visibleAt = await checkExactlyOnce(setup)
  t.diagnostic(`the dead one's transaction aborted ${endedAfterMs} ms after it began, every record visible after ${visibleAt - orphan.startedAt} ms (timeout ${orphan.timeoutMs} ms)`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})
