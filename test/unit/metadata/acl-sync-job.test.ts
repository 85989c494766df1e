import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { AdminClient } from '../../../src/kafka/admin-client.ts'
import { aclKey, type AclBinding, type AclResourceType } from '../../../src/kafka/acls.ts'
import { encodeOwnedAcl } from '../../../src/metadata/acl-ownership.ts'
import { principalOf } from '../../../src/metadata/acl-principal.ts'
import { AclSkipReasons, createAclSyncJobs, describeAclState } from '../../../src/metadata/acl-sync.ts'
import type { MetricKey } from '../../../src/metrics/definitions.ts'
import type { Metrics } from '../../../src/metrics/metrics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { TopicLog } from '../../fakes/topic-log.ts'
import { acl, flowWith } from './acl-fixtures.ts'

/** An admin client holding ACLs in memory; `acls: null` plays a cluster without authorizer. */
class FakeAdmin {
  acls: AclBinding[] | null
  topics: string[] = []
  describedTypes: AclResourceType[][] = []
  createRequests: AclBinding[][] = []
  deleteRequests: AclBinding[][] = []
  topicListings = 0
  describeError: unknown = null
  createError: unknown = null
  /** Bindings the cluster refuses one by one (an invalid binding fails its whole request). */
  refused = new Set<string>()

  constructor (acls: AclBinding[] | null) {
    this.acls = acls
  }

  async describeAcls (types: readonly AclResourceType[]): Promise<AclBinding[] | null> {
    this.describedTypes.push([...types])
    if (this.describeError !== null) throw this.describeError
    return this.acls?.filter(b => types.includes(b.resourceType)) ?? null
  }

  async createAcls (bindings: readonly AclBinding[]): Promise<void> {
    this.createRequests.push([...bindings])
    if (this.createError !== null) throw this.createError
    // A real cluster creates every valid binding of a request even when another one fails, and never twice.
    const held = new Set(this.acls!.map(aclKey))
    this.acls!.push(...bindings.filter(b => !this.refused.has(aclKey(b)) && !held.has(aclKey(b))))
    if (bindings.some(b => this.refused.has(aclKey(b)))) throw new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'create ACLs: INVALID_REQUEST', { details: { kafkaErrors: ['INVALID_REQUEST'] } })
  }

  async deleteAcls (bindings: readonly AclBinding[]): Promise<void> {
    this.deleteRequests.push([...bindings])
    const gone = new Set(bindings.map(aclKey))
    this.acls = this.acls!.filter(b => !gone.has(aclKey(b)))
  }

  /** The ownership topic: absent, then created at the first call, so that nothing is read from it in these tests. */
  topicsCreated: string[] = []
  async describeTopics (): Promise<Map<string, unknown>> {
    return new Map()
  }

  async createTopic (topic: { name: string }): Promise<string> {
    this.topicsCreated.push(topic.name)
    return 'created'
  }

  async listTopics (): Promise<string[]> {
    this.topicListings++
    return this.topics
  }
}

function countingMetrics (): Metrics & { counts: Map<MetricKey, number> } {
  const counts = new Map<MetricKey, number>()
  return { counts, inc: (key, _labels, value = 1) => { counts.set(key, (counts.get(key) ?? 0) + value) }, set: () => undefined, observe: () => undefined, remove: () => undefined }
}

/** The ownership topic in memory: what the store writes (also told as events, in order), it reads back. */
function ownershipTopic (events: string[]) {
  const log = new TopicLog((topic, r) => events.push(`${r.value === null ? 'forget' : 'record'} ${topic} ${r.key?.toString()}`))
  return { writer: log, reader: log }
}

function setupWithOwnership (source: AclBinding[], target: AclBinding[], ...lines: string[]) {
  const events: string[] = []
  const s = setup(source, target, ...lines)
  const topic = ownershipTopic(events)
  const jobs = createAclSyncJobs({ ...s.context, targetReader: topic.reader as never, internalWriter: topic.writer as never })
  const created = s.targetAdmin.createAcls.bind(s.targetAdmin)
  s.targetAdmin.createAcls = async bindings => { events.push(`create ${bindings.map(b => b.resourceName).join(',')}`); await created(bindings) }
  s.targetAdmin.deleteAcls = async bindings => { events.push(`delete ${bindings.map(b => b.resourceName).join(',')}`); s.targetAdmin.deleteRequests.push([...bindings]); s.targetAdmin.acls = s.targetAdmin.acls!.filter(b => !bindings.some(d => aclKey(d) === aclKey(b))) }
  return { ...s, events, ownershipLog: topic.writer, run: () => jobs[0]!.run(new AbortController().signal), runWith: (signal: AbortSignal) => jobs[0]!.run(signal) }
}

/** As setupWithOwnership, with OWNED on the target and recorded in the ownership topic: copies an earlier kmirror made. */
async function setupWithOwned (owned: AclBinding[], source: AclBinding[], ...lines: string[]) {
  const s = setupWithOwnership(source, [...owned], ...lines)
  const value = Buffer.from(JSON.stringify({ flow: 'A->B' }))
  await s.ownershipLog.write([{ topic: 'mm2-acls.A.internal', partition: 0, records: owned.map(b => ({ key: encodeOwnedAcl(b), value, headers: [], timestamp: BigInt(Date.now()) })) }])
  s.targetAdmin.describeTopics = async () => new Map([['mm2-acls.A.internal', {}]])
  s.events.length = 0
  return s
}

function setup (source: AclBinding[] | null, target: AclBinding[] | null, ...lines: string[]) {
  const flow = flowWith('sync.topic.acls.interval.seconds = 7', ...lines)
  const sourceAdmin = new FakeAdmin(source)
  const targetAdmin = new FakeAdmin(target)
  const logs = memoryLogger()
  const metrics = countingMetrics()
  const context = {
    flow,
    policy: createReplicationPolicy(flow.replicationPolicy),
    sourceAdmin: sourceAdmin as unknown as AdminClient,
    targetAdmin: targetAdmin as unknown as AdminClient,
    log: logs.log,
    metrics
  }
  const jobs = createAclSyncJobs(context)
  return { flow, sourceAdmin, targetAdmin, logs, metrics, jobs, context, run: () => jobs[0]!.run(new AbortController().signal) }
}

const messages = (lines: readonly { msg: string }[], msg: string): number => lines.filter(l => l.msg === msg).length

describe('the sync-acls job', () => {
  it('runs at start and then every sync.topic.acls.interval.seconds', () => {
    const { jobs } = setup([], [])
    assert.deepEqual(jobs.map(j => ({ name: j.name, intervalMs: j.intervalMs, firstDelayMs: j.firstDelayMs })), [{ name: 'sync-acls', intervalMs: 7000, firstDelayMs: 0 }])
  })

  it('does not exist when sync.topic.acls.enabled is false or the interval is negative', () => {
    assert.deepEqual(setup([], [], 'sync.topic.acls.enabled = false').jobs, [])
    assert.deepEqual(setup([], [], 'sync.topic.acls.interval.seconds = -1').jobs, [])
  })

  it('creates the missing bindings once, logs each at info, counts them, and sends nothing on the next run', async () => {
    const { run, targetAdmin, logs, metrics } = setup([acl('allow read topic orders'), acl('allow read group billing')], [])
    await run()
    await run()
    assert.deepEqual(targetAdmin.createRequests, [[acl('allow read group billing'), acl('allow read topic A.orders')]])
    assert.deepEqual(logs.at(LogLevels.info).map(l => l['acl']), ['ALLOW READ on group billing for User:alice', 'ALLOW READ on topic A.orders for User:alice'])
    assert.equal(metrics.counts.get('aclsCreated'), 2)
  })

  it('logs a skipped binding at debug with its reason once, not on every run', async () => {
    const { run, logs } = setup([acl('allow write topic orders')], [])
    await run()
    await run()
    const skips = logs.at(LogLevels.debug).filter(l => l.msg === 'ACL not copied')
    assert.equal(skips.length, 1)
    assert.match(String(skips[0]!['reason']), /never grants write/)
  })

  it('logs once at info that a cluster has no authorizer, and succeeds without creating anything', async () => {
    const { run, targetAdmin, logs } = setup(null, [])
    await run()
    await run()
    assert.equal(messages(logs.at(LogLevels.info), 'no ACL authorizer is configured on cluster A: ACL sync has nothing to do'), 1)
    assert.deepEqual(targetAdmin.createRequests, [])
  })

  it('fails with the grant that fixes it when kmirror may not create ACLs on the target', async () => {
    const { run, targetAdmin } = setup([acl('allow read topic orders')], [])
    targetAdmin.createError = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'create 1 ACL(s) on cluster B: CLUSTER_AUTHORIZATION_FAILED', { details: { kafkaErrors: ['CLUSTER_AUTHORIZATION_FAILED'] } })
    await assert.rejects(run(), (err: KmirrorError) => {
      assert.match(err.message, /grant ALTER on the cluster resource of B to User:admin/)
      assert.match(err.message, /A->B\.sync\.topic\.acls\.enabled = false/)
      assert.equal(err.cause, targetAdmin.createError)
      return true
    })
  })

  it('fails with the grant that fixes it when kmirror may not read the source\'s ACLs', async () => {
    const { run, sourceAdmin } = setup([], [])
    sourceAdmin.describeError = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'describe topic ACLs', { details: { kafkaErrors: ['CLUSTER_AUTHORIZATION_FAILED'] } })
    await assert.rejects(run(), /grant DESCRIBE on the cluster resource of A to User:admin/)
  })

  it('creates the good bindings of a request one bad binding fails, then reports the bad one', async () => {
    const { run, targetAdmin } = setup([acl('allow read topic a'), acl('allow read topic b'), acl('allow read topic c')], [])
    targetAdmin.refused.add(aclKey(acl('allow read topic A.b')))
    await assert.rejects(run(), /could not create 1 of 3 ACL\(s\) on cluster B: ALLOW READ on topic A\.b for User:alice/)
    assert.deepEqual(targetAdmin.acls!.map(b => b.resourceName).sort(), ['A.a', 'A.c'])
  })
})

describe('the sync-acls job removes only what it created', () => {
  it('records a binding in mm2-acls.A.internal before creating it', async () => {
    const { run, events, targetAdmin } = setupWithOwnership([acl('allow read topic orders')], [])
    await run()
    assert.deepEqual(targetAdmin.topicsCreated, ['mm2-acls.A.internal'])
    assert.deepEqual(events, ['record mm2-acls.A.internal ["topic","literal","A.orders","User:alice","*","read","allow"]', 'create A.orders'])
  })

  it('deletes a binding it created once the source binding is gone, then forgets it; a hand-made one stays', async () => {
    const handMade = acl('allow read topic A.manual')
    const { run, sourceAdmin, targetAdmin, events, logs, metrics } = setupWithOwnership([acl('allow read topic orders'), acl('allow read topic manual')], [handMade])
    await run()
    sourceAdmin.acls = []
    await run()
    assert.deepEqual(targetAdmin.deleteRequests, [[acl('allow read topic A.orders')]])
    assert.deepEqual(targetAdmin.acls, [handMade])
    assert.equal(events.at(-1), 'forget mm2-acls.A.internal ["topic","literal","A.orders","User:alice","*","read","allow"]')
    assert.deepEqual(logs.at(LogLevels.info).filter(l => String(l.msg).startsWith('removed ACL')).map(l => l['acl']), ['ALLOW READ on topic A.orders for User:alice'])
    assert.equal(metrics.counts.get('aclsDeleted'), 1)
    await run()
    assert.equal(targetAdmin.deleteRequests.length, 1, 'nothing more to delete')
  })

  it('a binding the target refuses to create holds back no revoked ALLOW, but keeps a replaced DENY until its successor exists', async () => {
    // Given bob's ALLOW and a DENY copied and owned
    const { run, sourceAdmin, targetAdmin } = setupWithOwnership([acl('allow read topic orders User:bob'), acl('deny read topic orders User:eve')], [])
    await run()
    // When the source revokes bob, replaces eve's DENY by another, and the target refuses to create anything
    sourceAdmin.acls = [acl('deny describe topic orders User:eve')]
    targetAdmin.createAcls = async () => { throw new Error('INVALID_REQUEST') }
    await assert.rejects(run(), /INVALID_REQUEST|could not create/)
    // Then bob's ALLOW is removed all the same, and eve's old DENY stays until the new one could be created
    assert.deepEqual(targetAdmin.deleteRequests, [[acl('allow read topic A.orders User:bob')]])
    assert.deepEqual(targetAdmin.acls, [acl('deny read topic A.orders User:eve')])
  })

  it('holds back the ALLOWs a refused DENY overlaps, and creates the others', async () => {
    const { run, targetAdmin } = setupWithOwnership([acl('allow read topic orders prefixed User:bob'), acl('deny read topic orders-secret User:bob'), acl('allow read topic billing User:carol')], [], 'topics.exclude = orders-secret')
    const create = targetAdmin.createAcls.bind(targetAdmin)
    targetAdmin.createAcls = async bindings => {
      if (bindings.some(b => b.permission === 'deny')) throw new Error('INVALID_REQUEST')
      await create(bindings)
    }
    await assert.rejects(run(), /could not create 1 of 3 ACL\(s\) on cluster B: DENY READ on topic A\.orders-secret for User:bob \(INVALID_REQUEST\); held back until those DENYs exist \(they narrow them\): ALLOW READ on topic prefix A\.orders for User:bob/)
    assert.deepEqual(targetAdmin.acls, [acl('allow read topic A.billing User:carol')])
  })

  it('Given a copied prefix ALLOW and the DENY that narrows it on another resource, when both are revoked, then the ALLOW is deleted first, in a request of its own, then the DENY', async () => {
    // Given bob may read every topic under `orders` but the excluded orders-secret, both copied and owned
    const source = [acl('allow read topic orders prefixed User:bob'), acl('deny read topic orders-secret User:bob')]
    const { run, sourceAdmin, targetAdmin, events } = setupWithOwnership(source, [], 'topics.exclude = orders-secret')
    await run()
    assert.deepEqual(targetAdmin.acls, [acl('deny read topic A.orders-secret User:bob'), acl('allow read topic A.orders prefixed User:bob')])
    // When the source revokes both
    sourceAdmin.acls = []
    events.length = 0
    await run()
    // Then no moment on B has the DENY gone while the ALLOW it narrows is still there
    assert.deepEqual(targetAdmin.deleteRequests, [[acl('allow read topic A.orders prefixed User:bob')], [acl('deny read topic A.orders-secret User:bob')]])
    assert.deepEqual(events.filter(e => e.startsWith('delete')), ['delete A.orders', 'delete A.orders-secret'])
    assert.deepEqual(targetAdmin.acls, [])
  })

  it('Given a revoked ALLOW and DENY, when the target refuses the ALLOW\'s deletion, then the DENY is not deleted either and nothing is forgotten', async () => {
    const { run, sourceAdmin, targetAdmin, events } = setupWithOwnership([acl('allow read topic orders User:bob'), acl('deny read topic orders User:eve')], [])
    await run()
    sourceAdmin.acls = []
    events.length = 0
    targetAdmin.deleteAcls = async bindings => { targetAdmin.deleteRequests.push([...bindings]); throw new Error('INVALID_REQUEST') }
    await assert.rejects(run(), /INVALID_REQUEST/)
    assert.deepEqual(targetAdmin.deleteRequests, [[acl('allow read topic A.orders User:bob')]])
    assert.deepEqual(targetAdmin.acls, [acl('deny read topic A.orders User:eve'), acl('allow read topic A.orders User:bob')])
    assert.deepEqual(events.filter(e => e.startsWith('forget')), [])
  })

  it('Given DENYs, ALLOWs and a revoked binding to sync, when the run is aborted right after the DENYs are created, then no ALLOW is created, nothing is deleted or forgotten, and the run rejects with the abort\'s reason', async () => {
    // Given bob's ALLOW copied and owned
    const { run, runWith, sourceAdmin, targetAdmin, events } = setupWithOwnership([acl('allow read topic orders User:bob')], [])
    await run()
    // When the source revokes bob, adds a DENY for eve and an ALLOW for carol, and the run is aborted by its DENYs' creation
    sourceAdmin.acls = [acl('deny read topic orders User:eve'), acl('allow read topic orders User:carol')]
    events.length = 0
    const aborted = new AbortController()
    const reason = new Error('job sync-acls stopped: the group membership that owned it ended')
    const create = targetAdmin.createAcls.bind(targetAdmin)
    targetAdmin.createAcls = async bindings => { await create(bindings); aborted.abort(reason) }
    await assert.rejects(runWith(aborted.signal), err => err === reason)
    // Then only the DENY (and its record before it) went out
    assert.deepEqual(events.filter(e => !e.startsWith('record')), ['create A.orders'])
    assert.deepEqual(targetAdmin.createRequests.at(-1), [acl('deny read topic A.orders User:eve')])
    assert.deepEqual(targetAdmin.deleteRequests, [])
    assert.deepEqual(targetAdmin.acls, [acl('allow read topic A.orders User:bob'), acl('deny read topic A.orders User:eve')])
  })

  it('Given a revoked binding to delete, when the run is aborted before the removal, then it is neither deleted nor forgotten', async () => {
    const { run, runWith, sourceAdmin, targetAdmin, events } = setupWithOwnership([acl('allow read topic orders User:bob')], [])
    await run()
    sourceAdmin.acls = [acl('allow read topic orders User:carol')]
    events.length = 0
    const aborted = new AbortController()
    const reason = new Error('job sync-acls stopped: revoked')
    const create = targetAdmin.createAcls.bind(targetAdmin)
    targetAdmin.createAcls = async bindings => { await create(bindings); aborted.abort(reason) }
    await assert.rejects(runWith(aborted.signal), err => err === reason)
    assert.deepEqual(events.filter(e => !e.startsWith('record')), ['create A.orders'])
    assert.deepEqual(targetAdmin.deleteRequests, [])
  })

  it('Given an aborted run, then not even the ownership record goes out before the creation', async () => {
    const { runWith, targetAdmin, events } = setupWithOwnership([acl('allow read topic orders')], [])
    const aborted = new AbortController()
    const reason = new Error('lost')
    aborted.abort(reason)
    await assert.rejects(runWith(aborted.signal), err => err === reason)
    assert.deepEqual(events, [])
    assert.deepEqual(targetAdmin.createRequests, [])
  })

  it('creates no ownership topic while it has nothing to create', async () => {
    const { run, targetAdmin } = setupWithOwnership([acl('allow write topic orders')], [])
    await run()
    assert.deepEqual(targetAdmin.topicsCreated, [])
  })

  it('without an ownership store (no internal topics) it never deletes', async () => {
    const { run, sourceAdmin, targetAdmin } = setup([acl('allow read topic orders')], [])
    await run()
    sourceAdmin.acls = []
    await run()
    assert.deepEqual(targetAdmin.deleteRequests, [])
  })
})

describe('the sync-acls job tells why a copy it made goes when its source binding is still there', () => {
  it('Given a prefix ALLOW an earlier kmirror copied over A.checkpoints.internal, when the sync runs, then it warns once naming the binding, cluster B and the fix, and removes the copy giving that reason, not "its source binding is gone"', async () => {
    // Given `check` → `A.check` on B, copied and recorded before kmirror knew it covers A.checkpoints.internal
    const copied = acl('allow read topic A.check prefixed User:bob')
    const { run, targetAdmin, logs } = await setupWithOwned([copied], [acl('allow read topic check prefixed User:bob')])
    // When the sync runs twice
    await run()
    await run()
    // Then the copy is gone from B
    assert.deepEqual(targetAdmin.deleteRequests, [[copied]])
    assert.deepEqual(targetAdmin.acls, [])
    // and one warning says what is not copied, where, why and what to do
    const warning = 'ACL ALLOW READ on topic prefix check for User:bob is not copied: on cluster B its prefix A.check would also cover ' +
      'topic A.checkpoints.internal, kept there by kmirror or MM2 and no copy of a topic under check; ' +
      'grant the remote topics under it by name, or a narrower prefix, on cluster B by hand'
    assert.deepEqual(logs.at(LogLevels.warn).map(l => [l.msg, l['acl'], l['reason']]), [[warning, 'ALLOW READ on topic prefix check for User:bob', AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC]])
    // and the removal gives that reason
    const removals = logs.at(LogLevels.info).filter(l => l.msg.startsWith('removed ACL'))
    assert.deepEqual(removals.map(l => [l.msg, l['acl'], l['source'], l['reason']]), [[
      `removed ACL from the target: kmirror created it and its source binding ALLOW READ on topic prefix check for User:bob is no longer copied: ${AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC}`,
      'ALLOW READ on topic prefix A.check for User:bob', 'ALLOW READ on topic prefix check for User:bob', AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC
    ]])
  })

  it('Given a DENY READ User:* an earlier kmirror copied over A.checkpoints.internal, and the ALLOW it narrows, when the sync runs, then both copies go, the ALLOW first, each with its reason', async () => {
    const copiedDeny = acl('deny read topic A.check prefixed User:*')
    const copiedAllow = acl('allow read topic A.checkout User:bob')
    const { run, targetAdmin, logs } = await setupWithOwned([copiedDeny, copiedAllow], [acl('deny read topic check prefixed User:*'), acl('allow read topic checkout User:bob')])
    await run()
    assert.deepEqual(targetAdmin.deleteRequests, [[copiedAllow], [copiedDeny]])
    const removals = [...logs.at(LogLevels.info), ...logs.at(LogLevels.warn)].filter(l => l.msg.startsWith('removed ACL'))
    assert.deepEqual(removals.map(l => [l.level, l.msg]), [
      [LogLevels.info, 'removed ACL from the target: kmirror created it and its source binding ALLOW READ on topic checkout for User:bob is no longer copied: ' +
        `${AclSkipReasons.NARROWED_BY_UNCOPIED_DENY} (DENY READ on topic prefix check for User:*)`],
      // (a DENY gone from the target while the source still has it: at warn, since a hand-made ALLOW may grant more now)
      [LogLevels.warn, `removed ACL from the target: kmirror created it and its source binding DENY READ on topic prefix check for User:* is no longer copied: ${AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR}. ` +
        'The target no longer refuses what this DENY refused: kmirror removed its own copies of the ALLOWs it narrows, but an ALLOW made on the target by hand ' +
        'under it now grants that access. Check the target\'s ACLs for such ALLOWs, and add a DENY there by hand that leaves out kmirror\'s principal and topics if the refusal must hold']
    ])
    // (the narrowed ALLOW warns; the DENY's skip is debug, as every DENY kmirror does not copy)
    assert.deepEqual(logs.at(LogLevels.warn).filter(l => !l.msg.startsWith('removed ACL')).map(l => [l['acl'], l['deny']]), [['ALLOW READ on topic checkout for User:bob', 'DENY READ on topic prefix check for User:*']])
  })
})

describe('describeAclState', () => {
  it('asks for topic and group ACLs, and lists source topics only when a topic prefix or wildcard needs them', async () => {
    const { context, sourceAdmin, targetAdmin } = setup([acl('allow read topic orders')], [])
    sourceAdmin.topics = ['orders']
    assert.deepEqual(await describeAclState(context), { sourceAcls: [acl('allow read topic orders')], targetAcls: [], sourceTopics: [] })
    assert.deepEqual(sourceAdmin.describedTypes, [['topic', 'group']])
    assert.deepEqual(targetAdmin.describedTypes, [['topic', 'group']])
    sourceAdmin.acls!.push(acl('allow read topic ord prefixed'))
    assert.deepEqual((await describeAclState(context)).sourceTopics, ['orders'])
    assert.equal(sourceAdmin.topicListings, 1)
  })

  it('asks for topic ACLs only when sync.group.acls.enabled is false', async () => {
    const { context, sourceAdmin } = setup([], [], 'sync.group.acls.enabled = false')
    await describeAclState(context)
    assert.deepEqual(sourceAdmin.describedTypes, [['topic']])
  })
})

describe('principalOf', () => {
  it('is the SASL user for PLAIN and SCRAM, ANONYMOUS on PLAINTEXT, and unknown otherwise', () => {
    const jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="x";'
    assert.equal(principalOf({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': jaas }), 'User:mirror')
    assert.equal(principalOf({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': jaas }), 'User:mirror')
    assert.equal(principalOf({}), 'User:ANONYMOUS')
    assert.equal(principalOf({ 'security.protocol': 'SSL' }), null)
    assert.equal(principalOf({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER' }), null)
  })
})
