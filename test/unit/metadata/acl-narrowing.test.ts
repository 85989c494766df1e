import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AclBinding } from '../../../src/kafka/acls.ts'
import { patternsOverlap } from '../../../src/metadata/acl-rules.ts'
import { AclSkipReasons, type AclSyncPlan } from '../../../src/metadata/acl-sync.ts'
import { acl, flowWith, plan, type PlanOptions } from './acl-fixtures.ts'

const IDENTITY = 'replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy'

/** The plan of these source bindings (kmirror writes as User:admin on the target). */
function planOf (specs: readonly string[], options: PlanOptions = {}): AclSyncPlan {
  return plan(specs.map(acl), options)
}

/** The source ALLOW that was not copied because of a DENY, with that DENY. */
function narrowed (p: AclSyncPlan): { allow: AclBinding, deny: AclBinding | undefined }[] {
  return p.skipped.filter(s => s.reason === AclSkipReasons.NARROWED_BY_UNCOPIED_DENY).map(s => ({ allow: s.binding, deny: s.narrowedBy }))
}

describe('ACL sync never widens access: a DENY it cannot copy whole keeps the ALLOWs it narrows off the target', () => {
  it('does not copy ALLOW READ for bob when DENY DESCRIBE User:* on the same topic cannot be copied (the tester\'s case)', () => {
    const p = planOf(['allow read topic orders User:bob', 'deny describe topic orders User:*'])
    assert.deepEqual(p.create, [])
    assert.deepEqual(narrowed(p), [{ allow: acl('allow read topic orders User:bob'), deny: acl('deny describe topic orders User:*') }])
    assert.deepEqual(p.skipped.find(s => s.binding.permission === 'deny')?.reason, AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR)
  })

  it('keeps off the target the ALLOWs a DENY narrows that is not copied because its target prefix covers a topic kept there that is no copy', () => {
    // Given `DENY READ check* User:*` on the source (`A.check` would keep consumers from their checkpoints on B)
    const p = planOf(['deny read topic check prefixed User:*', 'allow read topic checkout User:bob', 'allow read topic checkout-eu prefixed User:carol', 'allow read topic orders User:bob'], { sourceTopics: ['checkout', 'checkout-eu-1', 'orders'] })
    // Then neither the DENY nor the checkout ALLOWs it narrows reach the target, only the orders one
    assert.deepEqual(p.create, [acl('allow read topic A.orders User:bob')])
    assert.deepEqual(p.skipped.find(s => s.binding.permission === 'deny')?.reason, AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR)
    assert.deepEqual(narrowed(p), [
      { allow: acl('allow read topic checkout User:bob'), deny: acl('deny read topic check prefixed User:*') },
      { allow: acl('allow read topic checkout-eu prefixed User:carol'), deny: acl('deny read topic check prefixed User:*') }
    ])
    // and likewise under the identity policy for `DENY READ mm2- User:admin` (kmirror's progress) and bob's mm2-events
    const identity = planOf(['deny read topic mm2- prefixed User:admin', 'allow read topic mm2-events User:admin', 'allow read topic mm2-events User:bob'], { flow: flowWith(IDENTITY) })
    assert.deepEqual(identity.create, [acl('allow read topic mm2-events User:bob')])
    assert.deepEqual(narrowed(identity).map(n => n.allow), [acl('allow read topic mm2-events User:admin')])
  })

  it('copies a DENY of another principal whole, and the ALLOW with it: the target narrows it as the source does', () => {
    const p = planOf(['allow read topic orders User:bob', 'deny describe topic orders User:bob'])
    assert.deepEqual(p.create, [acl('deny describe topic A.orders User:bob'), acl('allow read topic A.orders User:bob')])
    assert.deepEqual(narrowed(p), [])
  })

  it('applies a prefixed DENY to the literal ALLOWs and the prefixes it covers or lies under', () => {
    for (const allow of ['allow read topic orders User:bob', 'allow read topic ord prefixed User:bob', 'allow read topic orders-eu prefixed User:bob']) {
      const p = planOf([allow, 'deny describe topic orders prefixed User:*'], { sourceTopics: ['orders', 'orders-eu-1'] })
      assert.deepEqual(narrowed(p).map(n => n.allow), [acl(allow)], allow)
      assert.deepEqual(p.create, [], allow)
    }
  })

  it('leaves ALLOWs of other topics alone', () => {
    const p = planOf(['allow read topic payments User:bob', 'allow read topic or prefixed User:bob', 'deny describe topic orders User:*'], { sourceTopics: ['payments'] })
    // `or` covers `orders`: dropped; `payments` does not overlap
    assert.deepEqual(p.create, [acl('allow read topic A.payments User:bob')])
    assert.deepEqual(narrowed(p).map(n => n.allow), [acl('allow read topic or prefixed User:bob')])
  })

  it('counts the operations READ implies: a DENY DESCRIBE narrows READ and DESCRIBE, not DESCRIBE_CONFIGS', () => {
    const p = planOf(['allow read topic orders User:bob', 'allow describe topic orders User:bob', 'allow describe-configs topic orders User:bob', 'deny describe topic orders User:*'])
    assert.deepEqual(narrowed(p).map(n => n.allow.operation).sort(), ['describe', 'read'])
    assert.deepEqual(p.create, [acl('allow describe-configs topic A.orders User:bob')])
  })

  it('counts ALLOW ALL as the READ it is copied as', () => {
    const p = planOf(['allow all topic orders User:bob', 'deny describe topic orders User:*'])
    assert.deepEqual(narrowed(p).map(n => n.allow), [acl('allow all topic orders User:bob')])
  })

  it('a DENY DESCRIBE_CONFIGS on User:* narrows only ALLOW DESCRIBE_CONFIGS', () => {
    const p = planOf(['allow read topic orders User:bob', 'allow describe-configs topic orders User:bob', 'deny describe-configs topic orders User:*'])
    assert.deepEqual(narrowed(p).map(n => n.allow.operation), ['describe-configs'])
    assert.deepEqual(p.create, [acl('allow read topic A.orders User:bob')])
  })

  it('a DENY READ on User:* is copied whole, so the ALLOW READ is copied too and the target denies it', () => {
    const p = planOf(['allow read topic orders User:bob', 'deny read topic orders User:*'])
    assert.deepEqual(p.create, [acl('deny read topic A.orders User:*'), acl('allow read topic A.orders User:bob')])
  })

  it('a DENY ALL on User:* is copied as DENY READ; the ALLOWs it narrows (READ implies DESCRIBE) are not copied', () => {
    const p = planOf(['allow read topic orders User:bob', 'allow describe-configs topic orders User:bob', 'deny all topic orders User:*'])
    assert.deepEqual(p.create, [acl('deny read topic A.orders User:*')])
    assert.equal(narrowed(p).length, 2)
  })

  it('a DENY WRITE narrows none of the read-only grants kmirror copies', () => {
    const p = planOf(['allow read topic orders User:bob', 'deny write topic orders User:*'])
    assert.deepEqual(p.create, [acl('allow read topic A.orders User:bob')])
  })

  it('a DENY on kmirror\'s own principal narrows ALLOWs of that principal and of User:*', () => {
    const p = planOf(['allow read topic orders User:*', 'allow read topic orders User:bob', 'deny describe topic orders User:admin'])
    assert.deepEqual(narrowed(p).map(n => n.allow.principal), ['User:*'])
    assert.deepEqual(p.create, [acl('allow read topic A.orders User:bob')])
  })

  it('compares hosts: a DENY from one host narrows ALLOWs from any host or that host, not from another', () => {
    const deny = 'deny describe topic orders User:* host=10.0.0.1'
    assert.deepEqual(narrowed(planOf(['allow read topic orders User:bob', deny])).length, 1)
    assert.deepEqual(narrowed(planOf(['allow read topic orders User:bob host=10.0.0.1', deny])).length, 1)
    assert.deepEqual(planOf(['allow read topic orders User:bob host=10.0.0.2', deny]).create, [acl('allow read topic A.orders User:bob host=10.0.0.2')])
  })

  it('with the identity policy, a DENY of a topic the flow does not replicate is not copied onto the target\'s own topic of that name; the ALLOWs it overlaps stay off', () => {
    const p = planOf(['allow read topic se prefixed User:bob', 'deny all topic secret User:*'], { flow: flowWith(IDENTITY, 'topics.exclude = secret'), sourceTopics: ['search'] })
    assert.deepEqual(p.create, [])
    assert.deepEqual(narrowed(p).map(n => n.deny), [acl('deny all topic secret User:*')])
  })

  it('with the identity policy, a wildcard DENY it cannot map keeps every overlapping ALLOW off the target', () => {
    const p = planOf(['allow read topic orders User:bob', 'deny read topic * User:bob'], { flow: flowWith(IDENTITY) })
    assert.deepEqual(p.create, [])
    assert.deepEqual(narrowed(p).map(n => n.deny), [acl('deny read topic * User:bob')])
  })

  it('a DENY on a prefix that covers no replicated topic still narrows an overlapping prefix ALLOW', () => {
    const p = planOf(['allow read topic orders prefixed User:bob', 'deny read topic orders-secret prefixed User:bob'], { flow: flowWith('topics = orders|orders-[0-9]+'), sourceTopics: ['orders'] })
    assert.deepEqual(narrowed(p).map(n => n.allow), [acl('allow read topic orders prefixed User:bob')])
  })

  it('a literal DENY of a topic the flow does not replicate is copied when a copied ALLOW covers its remote name (it may still hold data there), and only then', () => {
    // Given bob may read everything under orders but orders-secret, which the flow excludes (its remote topic stays)
    const p = planOf(['allow read topic orders prefixed User:bob', 'deny read topic orders-secret User:*'], { flow: flowWith('topics.exclude = orders-secret'), sourceTopics: ['orders'] })
    // Then the DENY goes with the prefix ALLOW, first: bob reads no more on the target than on the source
    assert.deepEqual(p.create, [acl('deny read topic A.orders-secret User:*'), acl('allow read topic A.orders prefixed User:bob')])
    assert.deepEqual(p.skipped, [])
    // A DENY no copied ALLOW covers is not copied
    const q = planOf(['allow read topic orders User:bob', 'deny read topic audit User:bob'], { flow: flowWith('topics = orders'), sourceTopics: ['orders'] })
    assert.deepEqual(q.create, [acl('allow read topic A.orders User:bob')])
    assert.deepEqual(q.skipped.map(s => s.reason), [AclSkipReasons.TOPIC_NOT_REPLICATED])
  })

  it('does not copy a group DENY READ, DESCRIBE or ALL on User:* or kmirror\'s principal, and keeps the group ALLOWs it narrows off the target', () => {
    for (const deny of ['deny read group orders-app User:*', 'deny describe group orders- prefixed User:*', 'deny all group * User:*']) {
      const p = planOf(['allow read group orders-app User:bob', deny])
      assert.deepEqual(p.create, [], deny)
      assert.equal(p.skipped.find(s => s.binding.permission === 'deny')?.reason, AclSkipReasons.GROUP_DENY_WOULD_BLOCK_KMIRROR, deny)
      assert.deepEqual(narrowed(p).map(n => n.allow), [acl('allow read group orders-app User:bob')], deny)
    }
    // kmirror's own principal: not copied, and it narrows only ALLOWs of that principal (or User:*)
    const own = planOf(['allow read group orders-app User:bob', 'allow read group orders-app User:*', 'deny read group orders-app User:admin'])
    assert.deepEqual(own.create, [acl('allow read group orders-app User:bob')])
    // A group DENY of an operation kmirror never uses is copied as it is
    assert.deepEqual(planOf(['deny delete group orders-app User:*']).create, [acl('deny delete group orders-app User:*')])
  })

  it('a group DENY the group filter leaves out narrows the group ALLOWs it covers', () => {
    const p = planOf(['allow read group orders-app User:bob', 'deny read group orders- prefixed User:bob'], { flow: flowWith('groups = orders-app') })
    assert.deepEqual(p.create, [])
    assert.deepEqual(narrowed(p).map(n => n.allow), [acl('allow read group orders-app User:bob')])
  })
})

describe('patternsOverlap', () => {
  const lit = (name: string) => ({ resourceName: name, patternType: 'literal' as const })
  const pre = (name: string) => ({ resourceName: name, patternType: 'prefixed' as const })
  it('matches equal literals, a literal under a prefix, nested prefixes and the wildcard', () => {
    assert.equal(patternsOverlap(lit('orders'), lit('orders')), true)
    assert.equal(patternsOverlap(lit('orders'), lit('order')), false)
    assert.equal(patternsOverlap(lit('orders'), pre('ord')), true)
    assert.equal(patternsOverlap(pre('ord'), lit('orders')), true)
    assert.equal(patternsOverlap(pre('orders'), lit('ord')), false)
    assert.equal(patternsOverlap(pre('ord'), pre('orders')), true)
    assert.equal(patternsOverlap(pre('pay'), pre('orders')), false)
    assert.equal(patternsOverlap(lit('*'), lit('orders')), true)
    assert.equal(patternsOverlap(pre('x'), lit('*')), true)
  })
})
