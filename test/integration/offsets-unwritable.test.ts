/**
 * The offsets topic on the target refuses every write while two instances copy (its max.message.bytes lowered below
 * any batch mid-run: for every write the same kind of refusal as a revoked WRITE grant). Progress that cannot be
 * stored is not a partition's problem: it is the flow's, and in at-least-once mode it stops rather than copy on with
 * nothing stored (docs/errors.md, KMIRROR_ERR_PRODUCE). What must hold: each instance says why, naming the topic and
 * the fix; its hand-over, which cannot store the progress of the partitions it gives up, ends by the stop's deadline
 * and says which partitions' progress is not stored; it exits 4. Once the topic takes writes again, an instance
 * started again resumes from the progress stored before: every record is on the target, in source order.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { STOP_DEADLINE_MS } from '../../src/cli/run-command.ts'
import { getCluster } from '../helpers/clusters.ts'
import { startInstance, waitForSplit } from '../helpers/instances.ts'
import { checkCopy, PARTITIONS, sharedFlow } from '../helpers/shared-flow.ts'

interface LogLine { readonly msg: string, readonly time: string, readonly partitions?: readonly string[], readonly err?: { readonly message?: string } }

const lines = (stderr: string): LogLine[] => stderr.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as LogLine)

test('the offsets topic refusing every write mid-run: every instance stops (exit 4) naming the topic and the fix, its hand-over ended by the stop deadline saying what is not stored; started again once it takes writes, nothing is lost', { timeout: 150_000 }, async t => {
  // Given two instances sharing a flow 6/6 while records keep arriving
  const setup = await sharedFlow(t, 'offsets-unwritable')
  const offsetsTopic = `mm2-offsets.${setup.source}.internal`
  const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' })
  t.after(async () => { await admin.close() })

  // When the target refuses every write to the offsets topic
  await admin.alterTopicConfigs(offsetsTopic, [{ op: 'set', name: 'max.message.bytes', value: '1' }])
  let restored = false
  t.after(async () => { if (!restored) await admin.alterTopicConfigs(offsetsTopic, [{ op: 'delete', name: 'max.message.bytes' }]).catch(() => undefined) })

  // Then each instance stops with exit code 4
  for (const i of setup.instances) {
    const exit = await i.process.waitForExit(60_000)
    const log = lines(i.process.stderr)
    assert.equal(exit.code, 4, i.process.stderr.slice(-3000))
    // and says why: the topic, the cluster, the Kafka error and the fix
    const fatal = log.find(l => l.msg === 'replication stopped by an error it cannot recover from')
    assert.ok(fatal !== undefined, i.process.stderr.slice(-3000))
    assert.match(fatal.err?.message ?? '', new RegExp(`write \\d+ record\\(s\\) to ${offsetsTopic.replace(/\./g, '\\.')} on cluster \\S+: .*\\[MESSAGE_TOO_LARGE\\]; raise max\\.message\\.bytes of the topic written to`))
    // and its hand-over, which tried to store the progress of its partitions, ended by the stop's deadline saying
    // which partitions' progress is not stored (their next owner copies again what was copied since)
    assert.ok(log.some(l => l.msg === 'cannot store the progress of revoked partitions; retrying'), i.process.stderr.slice(-3000))
    const notStored = log.find(l => /^the progress of \d+ released partition\(s\) is not stored: /.test(l.msg))
    assert.ok(notStored !== undefined && (notStored.partitions?.length ?? 0) > 0, i.process.stderr.slice(-3000))
    const last = log.at(-1)!
    const stopMs = Date.parse(last.time) - Date.parse(fatal.time)
    assert.ok(stopMs < STOP_DEADLINE_MS + 2000, `${i.name} stopped ${stopMs} ms after its fatal error (stop deadline ${STOP_DEADLINE_MS} ms)`)
    assert.ok(!log.slice(log.indexOf(fatal)).some(l => l.msg === 'work revoked: progress stored'), 'nothing told as stored after the error')
  }

  // When the offsets topic takes writes again and an instance starts again
  await admin.alterTopicConfigs(offsetsTopic, [{ op: 'delete', name: 'max.message.bytes' }])
  restored = true
  const again = await startInstance(setup.config, 'again', t)
  setup.instances.push(again)
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns all 12 partitions')

  // Then every record is on the target in source order: each partition goes back at most once, to its stored progress
  const rewinds = await checkCopy(setup, () => 1)
  t.diagnostic(`rewinds per partition: ${rewinds.join(', ')}`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})
