import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { planDocument, renderPlan } from '../../../src/cli/plan-command.ts'
import { AclSkipReasons } from '../../../src/metadata/acl-sync.ts'
import type { TopicSyncPlan } from '../../../src/metadata/topic-sync-plan.ts'
import { acl, plan } from '../metadata/acl-fixtures.ts'

function topicPlan (overrides: Partial<TopicSyncPlan>): TopicSyncPlan {
  return { flow: 'A->B', topics: [], create: [], addPartitions: [], alterConfigs: [], problems: [], warnings: [], configsUnread: [], deletedOnSource: [], recreatedOnSource: [], ...overrides }
}

describe('renderPlan', () => {
  it('shows a remote topic with more partitions than its source as a warning of a flow in sync: it is replicated, nothing is to change', () => {
    const warning = { topic: 't', remoteTopic: 'A.t', message: 'remote topic A.t on B has 4 partitions but source topic t on A has 2: ...' }
    const text = renderPlan({ flow: 'A->B', topics: topicPlan({ topics: [{ source: 't', remote: 'A.t', partitions: 2 }], warnings: [warning] }), acls: null })
    assert.equal(text, 'flow A->B: in sync, nothing to do\n  ! remote topic A.t on B has 4 partitions but source topic t on A has 2: ...\n')
  })

  it('shows each removal of an ACL kmirror created with why: its source binding gone, or the reason it is no longer copied; and a `!` line for each ALLOW not copied that someone expects on the target', () => {
    // Given three copies kmirror made: one whose source binding is gone, one whose prefix now covers
    // A.checkpoints.internal, one a new DENY DESCRIBE User:* narrows
    const owned = [acl('allow read topic A.gone User:bob'), acl('allow read topic A.check prefixed User:bob'), acl('allow read topic A.orders User:bob')]
    const acls = plan([acl('allow read topic check prefixed User:bob'), acl('allow read topic orders User:bob'), acl('deny describe topic orders User:*')], { target: owned, owned })
    // When the plan is shown
    const text = renderPlan({ flow: 'A->B', topics: topicPlan({}), acls })
    // Then
    assert.equal(text, [
      'flow A->B: changes to make',
      `  - ACL ALLOW READ on topic A.gone for User:bob (kmirror created it; its source binding is gone)`,
      `  - ACL ALLOW READ on topic A.orders for User:bob (kmirror created it; its source binding ALLOW READ on topic orders for User:bob is no longer copied: ${AclSkipReasons.NARROWED_BY_UNCOPIED_DENY} (DENY DESCRIBE on topic orders for User:*))`,
      `  - ACL ALLOW READ on topic prefix A.check for User:bob (kmirror created it; its source binding ALLOW READ on topic prefix check for User:bob is no longer copied: ${AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC})`,
      '  ! ACL ALLOW READ on topic orders for User:bob is not copied: the source\'s DENY DESCRIBE on topic orders for User:* narrows it and cannot be copied whole ' +
        '(kmirror plan --json gives why that DENY is not copied); grant on cluster B by hand what you mean',
      '  ! ACL ALLOW READ on topic prefix check for User:bob is not copied: on cluster B its prefix A.check would also cover topic A.checkpoints.internal, ' +
        'kept there by kmirror or MM2 and no copy of a topic under check; grant the remote topics under it by name, or a narrower prefix, on cluster B by hand',
      ''
    ].join('\n'))
  })
})

describe('planDocument', () => {
  it('gives each ACL removal its cause, as the text does, and the drift', () => {
    const owned = [acl('allow read topic A.gone User:bob'), acl('allow read topic A.orders User:bob')]
    const acls = plan([acl('allow read topic orders User:bob'), acl('deny describe topic orders User:*')], { target: owned, owned })
    const doc = planDocument({ flow: 'A->B', topics: topicPlan({}), acls }) as { drift: boolean, acls: { remove: { resourceName: string, cause: string }[] } }
    assert.equal(doc.drift, true)
    assert.deepEqual(doc.acls.remove.map(r => [r.resourceName, r.cause]), [
      ['A.gone', 'its source binding is gone'],
      ['A.orders', `its source binding ALLOW READ on topic orders for User:bob is no longer copied: ${AclSkipReasons.NARROWED_BY_UNCOPIED_DENY} (DENY DESCRIBE on topic orders for User:*)`]
    ])
    assert.deepEqual(planDocument({ flow: 'A->B', topics: topicPlan({}), acls: null }), { flow: 'A->B', topics: topicPlan({}), acls: null, drift: false })
  })
})
