import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AclBinding } from '../../../src/kafka/acls.ts'
import { formatAcl, removalCause, skipsByCopy } from '../../../src/metadata/acl-reports.ts'
import { AclSkipReasons } from '../../../src/metadata/acl-sync.ts'
import { remotePrefix } from '../../../src/metadata/acl-rules.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { acl, flowWith, outcome, plan, type PlanOptions } from './acl-fixtures.ts'

const IDENTITY = 'replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy'

describe('ACL sync plan: topic operations', () => {
  it('copies ALLOW READ of a replicated topic to its remote topic, keeping principal, host and permission', () => {
    assert.deepEqual(outcome(acl('allow read topic orders User:alice host=10.0.0.1')), acl('allow read topic A.orders User:alice host=10.0.0.1'))
  })

  it('copies ALLOW DESCRIBE and ALLOW DESCRIBE_CONFIGS as they are', () => {
    assert.deepEqual(outcome(acl('allow describe topic orders')), acl('allow describe topic A.orders'))
    assert.deepEqual(outcome(acl('allow describe-configs topic orders')), acl('allow describe-configs topic A.orders'))
  })

  it('turns ALLOW ALL into ALLOW READ, as MM2 does', () => {
    assert.deepEqual(outcome(acl('allow all topic orders')), acl('allow read topic A.orders'))
  })

  it('never copies ALLOW WRITE', () => {
    assert.equal(outcome(acl('allow write topic orders')), AclSkipReasons.OPERATION_NOT_GRANTED)
  })

  it('never grants CREATE, DELETE, ALTER, ALTER_CONFIGS, CLUSTER_ACTION or IDEMPOTENT_WRITE on a remote topic (MM2 copies those)', () => {
    for (const op of ['create', 'delete', 'alter', 'alter-configs', 'cluster-action', 'idempotent-write']) {
      assert.equal(outcome(acl(`allow ${op} topic orders`)), AclSkipReasons.OPERATION_NOT_GRANTED, op)
    }
  })

  it('copies DENY bindings of other principals unchanged, whatever the operation', () => {
    for (const op of ['read', 'write', 'all', 'describe', 'alter', 'create']) {
      assert.deepEqual(outcome(acl(`deny ${op} topic orders User:mallory`)), acl(`deny ${op} topic A.orders User:mallory`), op)
    }
  })

  it('copies of a DENY on kmirror\'s own target principal or User:* only the READ part, so replication cannot be blocked', () => {
    for (const principal of ['User:admin', 'User:*']) {
      assert.deepEqual(outcome(acl(`deny all topic orders ${principal}`)), acl(`deny read topic A.orders ${principal}`), principal)
      assert.deepEqual(outcome(acl(`deny read topic orders ${principal}`)), acl(`deny read topic A.orders ${principal}`), principal)
      for (const op of ['write', 'describe', 'create', 'alter', 'alter-configs', 'describe-configs', 'delete']) {
        assert.equal(outcome(acl(`deny ${op} topic orders ${principal}`)), AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR, `${principal} ${op}`)
      }
    }
  })

  it('copies nothing of a DENY on kmirror\'s own target principal or User:* whose target prefix covers a topic kept there that is no copy, whatever its operation; another principal\'s goes', () => {
    for (const principal of ['User:admin', 'User:*']) {
      for (const op of ['read', 'all']) {
        // (`check` → `A.check` covers A.checkpoints.internal: consumers that fail over could not read their checkpoints)
        assert.equal(outcome(acl(`deny ${op} topic check prefixed ${principal}`), { sourceTopics: ['checkout'] }), AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR, `${principal} ${op}`)
        // (identity: `mm2-` covers mm2-offsets.A.internal, kmirror's progress, read at every start)
        assert.equal(outcome(acl(`deny ${op} topic mm2- prefixed ${principal}`), { flow: flowWith(IDENTITY), sourceTopics: ['mm2-events'] }), AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR, `${principal} ${op} identity`)
        // (the wildcard `*` → `A.` covers A.checkpoints.internal too)
        assert.equal(outcome(acl(`deny ${op} topic * ${principal}`)), AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR, `${principal} ${op} *`)
      }
      // a pattern that covers no such topic keeps the READ part
      assert.deepEqual(outcome(acl(`deny all topic checkout prefixed ${principal}`), { sourceTopics: ['checkout'] }), acl(`deny read topic A.checkout prefixed ${principal}`), principal)
      assert.deepEqual(outcome(acl(`deny read topic mm2-events prefixed ${principal}`), { flow: flowWith(IDENTITY), sourceTopics: ['mm2-events'] }), acl(`deny read topic mm2-events prefixed ${principal}`), principal)
    }
    assert.deepEqual(outcome(acl('deny read topic check prefixed User:mallory'), { sourceTopics: ['checkout'] }), acl('deny read topic A.check prefixed User:mallory'))
    assert.deepEqual(outcome(acl('deny all topic * User:mallory')), acl('deny all topic A. prefixed User:mallory'))
  })

  it('takes kmirror\'s principal from the target\'s own client settings (User:ANONYMOUS on PLAINTEXT)', () => {
    const flow = flowWith('B.security.protocol = PLAINTEXT')
    assert.equal(outcome(acl('deny write topic orders User:ANONYMOUS'), { flow }), AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR)
    assert.deepEqual(outcome(acl('deny write topic orders User:admin'), { flow }), acl('deny write topic A.orders User:admin'))
  })
})

describe('ACL sync plan: which topics', () => {
  it('skips literal ACLs of topics the filter leaves out, whether they exist or not', () => {
    const flow = flowWith('topics = orders.*', 'topics.exclude = orders-secret')
    assert.deepEqual(outcome(acl('allow read topic orders-eu'), { flow }), acl('allow read topic A.orders-eu'))
    assert.equal(outcome(acl('allow read topic orders-secret'), { flow, sourceTopics: ['orders-secret'] }), AclSkipReasons.TOPIC_NOT_REPLICATED)
    assert.equal(outcome(acl('allow read topic payments'), { flow }), AclSkipReasons.TOPIC_NOT_REPLICATED)
  })

  it('skips internal topics, MM2\'s default exclusions and cycles back to the target', () => {
    for (const topic of ['__consumer_offsets', 'mm2-offsets.B.internal', 'orders.internal', 'orders.replica', 'B.orders', 'A.B.orders']) {
      assert.equal(outcome(acl(`allow read topic ${topic}`)), AclSkipReasons.TOPIC_NOT_REPLICATED, topic)
    }
  })

  it('copies ACLs of the heartbeats topic, which is replicated despite the filter', () => {
    assert.deepEqual(outcome(acl('allow read topic heartbeats'), { flow: flowWith('topics = orders') }), acl('allow read topic A.heartbeats'))
  })

  it('skips resource names that no topic can have', () => {
    assert.equal(outcome(acl('allow read topic bad/name')), AclSkipReasons.INVALID_TOPIC_NAME)
    assert.equal(outcome(acl('allow read topic bad* prefixed')), AclSkipReasons.INVALID_TOPIC_NAME)
  })

  it('renames with the configured separator, and keeps names with the identity policy', () => {
    assert.deepEqual(outcome(acl('allow read topic orders'), { flow: flowWith('replication.policy.separator = _') }), acl('allow read topic A_orders'))
    assert.deepEqual(outcome(acl('allow read topic orders'), { flow: flowWith(IDENTITY) }), acl('allow read topic orders'))
  })
})

describe('ACL sync plan: prefixed topic ACLs', () => {
  it('maps a prefix through the default policy: every remote name of a topic under `orders` starts with `A.orders`', () => {
    assert.deepEqual(outcome(acl('allow read topic orders prefixed')), acl('allow read topic A.orders prefixed'))
    assert.deepEqual(outcome(acl('deny describe topic orders prefixed User:mallory')), acl('deny describe topic A.orders prefixed User:mallory'))
  })

  it('maps a prefix with a custom separator, and keeps it with the identity policy', () => {
    assert.deepEqual(outcome(acl('allow read topic orders prefixed'), { flow: flowWith('replication.policy.separator = _') }), acl('allow read topic A_orders prefixed'))
    assert.deepEqual(outcome(acl('allow read topic orders prefixed'), { flow: flowWith(IDENTITY) }), acl('allow read topic orders prefixed'))
  })

  it('applies the operation rules to prefixes too', () => {
    assert.deepEqual(outcome(acl('allow all topic orders prefixed')), acl('allow read topic A.orders prefixed'))
    assert.equal(outcome(acl('allow write topic orders prefixed')), AclSkipReasons.OPERATION_NOT_GRANTED)
  })

  it('copies a prefix that passes the filter as a name, even before any topic under it exists', () => {
    assert.deepEqual(outcome(acl('allow read topic orders. prefixed'), { flow: flowWith('topics = orders\\\\..*') }), acl('allow read topic A.orders. prefixed'))
  })

  it('copies a prefix that fails the filter as a name once a replicated topic lies under it', () => {
    // In mm2.properties a backslash escapes, so the file says orders\\..* for the regex orders\..*
    const flow = flowWith('topics = orders\\\\..*')
    assert.equal(outcome(acl('allow read topic orders prefixed'), { flow, sourceTopics: ['orders', 'orders-x', 'payments'] }), AclSkipReasons.PREFIX_NOT_REPLICATED)
    assert.deepEqual(outcome(acl('allow read topic orders prefixed'), { flow, sourceTopics: ['orders.eu', 'payments'] }), acl('allow read topic A.orders prefixed'))
  })

  it('skips a prefix that covers no replicated topic, such as one under which every topic is excluded', () => {
    const flow = flowWith('topics = orders.*', 'topics.exclude = orders-secret.*')
    assert.equal(outcome(acl('allow read topic payments prefixed'), { flow, sourceTopics: ['payments-1'] }), AclSkipReasons.PREFIX_NOT_REPLICATED)
    assert.equal(outcome(acl('allow read topic orders-secret prefixed'), { flow, sourceTopics: ['orders-secret-1'] }), AclSkipReasons.PREFIX_NOT_REPLICATED)
  })

  it('skips a prefix the identity policy does not rename uniformly (heartbeats topics are renamed, others are not)', () => {
    assert.equal(outcome(acl('allow read topic heartbeats prefixed'), { flow: flowWith(IDENTITY) }), AclSkipReasons.PREFIX_NOT_MAPPABLE)
  })

  it('never copies a prefix ALLOW that would cover a topic kmirror keeps on the target (checkpoints, progress, history, ACL ownership); a DENY goes, and so does the wildcard (it covers the source\'s internal topics too)', () => {
    // `check` covers no consumer group's positions on the source; `A.check` would cover A.checkpoints.internal
    for (const prefix of ['c', 'check', 'checkpoints']) {
      assert.equal(outcome(acl(`allow read topic ${prefix} prefixed`), { sourceTopics: ['checkout'] }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC, prefix)
    }
    assert.deepEqual(outcome(acl('allow read topic checkout prefixed'), { sourceTopics: ['checkout'] }), acl('allow read topic A.checkout prefixed'))
    assert.deepEqual(outcome(acl('deny read topic check prefixed User:mallory'), { sourceTopics: ['checkout'] }), acl('deny read topic A.check prefixed User:mallory'))
    // (with the identity policy a prefix stays itself: `mm2-` would cover mm2-offsets.A.internal and the others)
    assert.equal(outcome(acl('allow describe topic mm2- prefixed'), { flow: flowWith(IDENTITY), sourceTopics: ['mm2-events'] }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    assert.equal(outcome(acl('allow read topic mm2-offset-h prefixed'), { flow: flowWith(IDENTITY, 'topics = mm2-.*') }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    assert.equal(outcome(acl('allow read topic mm2-acl prefixed'), { flow: flowWith(IDENTITY, 'topics = mm2-.*') }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    assert.deepEqual(outcome(acl('allow read topic mm2-events prefixed'), { flow: flowWith(IDENTITY), sourceTopics: ['mm2-events'] }), acl('allow read topic mm2-events prefixed'))
    // (the checkpoints topic follows the separator)
    assert.equal(outcome(acl('allow read topic check prefixed'), { flow: flowWith('replication.policy.separator = _'), sourceTopics: ['checkout'] }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    assert.deepEqual(outcome(acl('allow read topic *')), acl('allow read topic A. prefixed'))
  })

  it('never copies, under a policy that keeps names, a prefix ALLOW overlapping any flow\'s MM2 or kmirror internal topics on the target (other flows\' progress, offset syncs, connector configs)', () => {
    // Given topics under mm2- replicated with the identity policy: the target holds other flows' internal topics too
    const flow = flowWith(IDENTITY, 'topics = mm2-.*')
    // (a prefix under a head: another flow's progress, mm2-offsets.X.internal; a prefix over a head: MM2's connector configs)
    for (const prefix of ['mm2-offsets.X', 'mm2-offsets.', 'mm2-stat', 'mm2-configs.', 'mm2-offset-syncs.X', 'mm2-acls.X', 'mm2-offset-history.']) {
      assert.equal(outcome(acl(`allow read topic ${prefix} prefixed`), { flow }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC, prefix)
    }
    assert.deepEqual(outcome(acl('allow read topic mm2-offsetsX prefixed'), { flow }), acl('allow read topic mm2-offsetsX prefixed'))
    assert.deepEqual(outcome(acl('allow read topic mm2-events prefixed'), { flow }), acl('allow read topic mm2-events prefixed'))
    // (the offset syncs' head follows the policy's internal separator)
    const underscore = flowWith(IDENTITY, 'replication.policy.separator = _', 'offset-syncs.topic.location = target', 'topics = mm2-.*')
    assert.equal(outcome(acl('allow read topic mm2-offset-syncs_ prefixed'), { flow: underscore }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    // (a renaming policy's prefixes start with the alias: they reach no head)
    assert.deepEqual(outcome(acl('allow read topic mm2-offsets. prefixed'), { flow: flowWith('topics = mm2-.*') }), acl('allow read topic A.mm2-offsets. prefixed'))
  })

  it('warns that a binding equal to a skipped copy is on the target already, made by hand or an older kmirror (kmirror leaves it): it grants what the skip keeps off; one kmirror made is removed instead', () => {
    const source = acl('allow read topic check prefixed')
    const mm2Made = acl('allow read topic A.check prefixed')
    const foreign = plan([source], { target: [mm2Made], sourceTopics: ['checkout'] })
    assert.deepEqual(foreign.remove, [])
    assert.match(foreign.skipped[0]!.warning ?? '', /is not copied: on cluster B its prefix A\.check would also cover topic A\.checkpoints\.internal.*\. A binding equal to that copy, ALLOW READ on topic prefix A\.check for User:alice, is on cluster B already, not made by kmirror \(by hand, or by a kmirror older than its ownership record\): it grants there what kmirror keeps off/)
    const ours = plan([source], { target: [mm2Made], owned: [mm2Made], sourceTopics: ['checkout'] })
    assert.deepEqual(ours.remove, [mm2Made])
    assert.doesNotMatch(ours.skipped[0]!.warning ?? '', /not made by kmirror/)
  })

  it('with the identity policy, never copies a prefix ALLOW that would cover another cluster\'s checkpoints topic on the target (C.checkpoints.internal of flow C->B)', () => {
    const flow = flowWith(IDENTITY, 'clusters = A, B, C', 'C.bootstrap.servers = c:9092')
    assert.equal(outcome(acl('allow read topic C. prefixed'), { flow, sourceTopics: ['C.events'] }), AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC)
    assert.deepEqual(outcome(acl('allow read topic C.events prefixed'), { flow, sourceTopics: ['C.events'] }), acl('allow read topic C.events prefixed'))
  })

  it('turns the literal wildcard `*` into the prefix of every remote topic of the source, `A.`', () => {
    assert.deepEqual(outcome(acl('allow read topic *')), acl('allow read topic A. prefixed'))
    assert.deepEqual(outcome(acl('deny all topic * User:mallory')), acl('deny all topic A. prefixed User:mallory'))
  })

  it('skips the wildcard under the identity policy, where it would cover the target\'s own topics too', () => {
    assert.equal(outcome(acl('allow read topic *'), { flow: flowWith(IDENTITY) }), AclSkipReasons.WILDCARD_NOT_MAPPABLE)
  })

  it('computes the remote prefix as the head the policy puts before every name under it', () => {
    const policy = createReplicationPolicy(flowWith().replicationPolicy)
    assert.equal(remotePrefix(policy, 'A', 'orders'), 'A.orders')
    assert.equal(remotePrefix(policy, 'A', ''), 'A.')
    const identity = createReplicationPolicy(flowWith(IDENTITY).replicationPolicy)
    assert.equal(remotePrefix(identity, 'A', 'orders'), 'orders')
    assert.equal(remotePrefix(identity, 'A', 'heartbeats'), null)
  })
})

describe('ACL sync plan: consumer-group ACLs', () => {
  it('copies ALLOW READ and DESCRIBE of a group with the group name unchanged', () => {
    assert.deepEqual(outcome(acl('allow read group billing')), acl('allow read group billing'))
    assert.deepEqual(outcome(acl('allow describe group billing')), acl('allow describe group billing'))
  })

  it('turns ALLOW ALL into READ and skips every other grant', () => {
    assert.deepEqual(outcome(acl('allow all group billing')), acl('allow read group billing'))
    for (const op of ['delete', 'describe-configs', 'alter-configs', 'write']) {
      assert.equal(outcome(acl(`allow ${op} group billing`)), AclSkipReasons.GROUP_OPERATION_NOT_GRANTED, op)
    }
  })

  it('copies DENY bindings of groups unchanged', () => {
    assert.deepEqual(outcome(acl('deny all group billing User:mallory')), acl('deny all group billing User:mallory'))
  })

  it('copies prefixed group ACLs whose prefix passes groups / groups.exclude', () => {
    assert.deepEqual(outcome(acl('allow read group billing- prefixed')), acl('allow read group billing- prefixed'))
    assert.equal(outcome(acl('allow read group console-consumer- prefixed')), AclSkipReasons.GROUP_NOT_SYNCED)
  })

  it('skips groups outside groups / groups.exclude (MM2\'s defaults exclude console-consumer-, connect- and __)', () => {
    for (const group of ['console-consumer-1', 'connect-cluster', '__internal']) {
      assert.equal(outcome(acl(`allow read group ${group}`)), AclSkipReasons.GROUP_NOT_SYNCED, group)
    }
    assert.equal(outcome(acl('allow read group payments'), { flow: flowWith('groups = billing.*') }), AclSkipReasons.GROUP_NOT_SYNCED)
  })

  it('never copies a group ALLOW that covers groups the flow does not sync on the target: the wildcard, or a prefix or name of kmirror\'s own group; a DENY goes', () => {
    assert.equal(outcome(acl('allow read group *')), AclSkipReasons.GROUP_PATTERN_TOO_WIDE)
    assert.equal(outcome(acl('allow read group *'), { flow: flowWith('groups = billing.*') }), AclSkipReasons.GROUP_NOT_SYNCED)
    assert.equal(outcome(acl('allow read group kmirror prefixed')), AclSkipReasons.GROUP_PATTERN_TOO_WIDE)
    assert.equal(outcome(acl('allow read group kmirror-A-B')), AclSkipReasons.GROUP_PATTERN_TOO_WIDE)
    assert.deepEqual(outcome(acl('allow read group billing prefixed')), acl('allow read group billing prefixed'))
    assert.deepEqual(outcome(acl('deny read group * User:bob')), acl('deny read group * User:bob'))
  })

  it('skips every group ACL when sync.group.acls.enabled is false', () => {
    assert.equal(outcome(acl('allow read group billing'), { flow: flowWith('sync.group.acls.enabled = false') }), AclSkipReasons.GROUP_ACLS_DISABLED)
  })
})

describe('ACL sync plan: against the target', () => {
  it('skips cluster and transactional-id ACLs', () => {
    assert.equal(outcome(acl('allow alter cluster kafka-cluster')), AclSkipReasons.RESOURCE_NOT_SYNCED)
    assert.equal(outcome(acl('allow write transactional-id tx')), AclSkipReasons.RESOURCE_NOT_SYNCED)
  })

  it('creates only the bindings the target lacks, and counts the others as in sync', () => {
    const result = plan([acl('allow read topic orders'), acl('allow read topic payments')], { target: [acl('allow read topic A.orders'), acl('allow write topic A.orders User:admin')] })
    assert.deepEqual(result.create, [acl('allow read topic A.payments')])
    assert.equal(result.inSync, 1)
  })

  it('creates a binding once when several source bindings translate to it', () => {
    const result = plan([acl('allow all topic orders'), acl('allow read topic orders')])
    assert.deepEqual(result.create, [acl('allow read topic A.orders')])
  })

  it('lists creations and skips in a stable order, whatever the source order', () => {
    const source = [acl('allow read topic zeta'), acl('allow write topic beta'), acl('allow read topic alpha'), acl('allow write topic alpha')]
    const forward = plan(source)
    const backward = plan([...source].reverse())
    assert.deepEqual(forward, backward)
    assert.deepEqual(forward.create.map(b => b.resourceName), ['A.alpha', 'A.zeta'])
  })

  it('never plans a deletion of a binding kmirror did not create: target ACLs missing on the source are left alone', () => {
    const result = plan([], { target: [acl('allow read topic A.gone')] })
    assert.deepEqual(result, { create: [], remove: [], forget: [], skipped: [], inSync: 0, noAuthorizer: [] })
  })

  it('removes a binding kmirror created once no source binding translates to it, and forgets it if already gone', () => {
    const mine = acl('allow read topic A.gone')
    const result = plan([], { target: [mine], owned: [mine, acl('allow read topic A.deleted-by-hand')] })
    assert.deepEqual(result.remove, [mine])
    assert.deepEqual(result.forget, [acl('allow read topic A.deleted-by-hand')])
  })

  it('keeps a created binding its source still asks for, and re-creates it when someone deleted it', () => {
    const mine = acl('allow read topic A.orders')
    assert.deepEqual(plan([acl('allow read topic orders')], { target: [mine], owned: [mine] }), { create: [], remove: [], forget: [], skipped: [], inSync: 1, noAuthorizer: [] })
    assert.deepEqual(plan([acl('allow read topic orders')], { target: [], owned: [mine] }).create, [mine])
  })

  it('removes a created ALLOW once a new source DENY narrows it and cannot be copied whole', () => {
    const mine = acl('allow read topic A.orders User:bob')
    const result = plan([acl('allow read topic orders User:bob'), acl('deny describe topic orders User:*')], { target: [mine], owned: [mine] })
    assert.deepEqual(result.remove, [mine])
  })

  it('tells which skip a created binding is removed for when its source binding is still there: a topic or group the filter left, a pattern too wide, a narrowing DENY', () => {
    const cases: [AclBinding, AclBinding, PlanOptions, string][] = [
      [acl('allow read topic orders'), acl('allow read topic A.orders'), { flow: flowWith('topics.exclude = orders') }, AclSkipReasons.TOPIC_NOT_REPLICATED],
      [acl('allow all topic ord prefixed'), acl('allow read topic A.ord prefixed'), { flow: flowWith('topics = payments') }, AclSkipReasons.PREFIX_NOT_REPLICATED],
      [acl('allow read topic check prefixed'), acl('allow read topic A.check prefixed'), {}, AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC],
      [acl('deny all topic check prefixed User:*'), acl('deny read topic A.check prefixed User:*'), {}, AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR],
      [acl('allow read group billing'), acl('allow read group billing'), { flow: flowWith('groups.exclude = billing') }, AclSkipReasons.GROUP_NOT_SYNCED],
      [acl('allow read group kmirror prefixed'), acl('allow read group kmirror prefixed'), {}, AclSkipReasons.GROUP_PATTERN_TOO_WIDE]
    ]
    for (const [source, mine, options, reason] of cases) {
      const result = plan([source], { ...options, target: [mine], owned: [mine] })
      assert.deepEqual(result.remove, [mine], reason)
      assert.equal(removalCause(mine, skipsByCopy(result.skipped)), `its source binding ${formatAcl(source)} is no longer copied: ${reason}`, reason)
    }
    assert.equal(removalCause(acl('allow read topic A.gone'), skipsByCopy(plan([]).skipped)), 'its source binding is gone')
  })

  it('plans no removal when a cluster has no authorizer', () => {
    const mine = acl('allow read topic A.gone')
    assert.deepEqual(plan([], { target: null, owned: [mine] }).remove, [])
  })

  it('says which cluster has no authorizer and plans nothing, without failing', () => {
    assert.deepEqual(plan(null), { create: [], remove: [], forget: [], skipped: [], inSync: 0, noAuthorizer: ['source'] })
    assert.deepEqual(plan([acl('allow read topic orders')], { target: null }), { create: [], remove: [], forget: [], skipped: [], inSync: 0, noAuthorizer: ['target'] })
    assert.deepEqual(plan(null, { target: null }).noAuthorizer, ['source', 'target'])
  })
})

describe('formatAcl', () => {
  it('names permission, operation, resource, pattern, principal and a non-wildcard host', () => {
    assert.equal(formatAcl(acl('allow read topic A.orders prefixed User:alice')), 'ALLOW READ on topic prefix A.orders for User:alice')
    assert.equal(formatAcl(acl('deny describe-configs group g User:bob host=10.1.2.3')), 'DENY DESCRIBE_CONFIGS on group g for User:bob from 10.1.2.3')
  })
})
