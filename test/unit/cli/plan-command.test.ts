import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { renderPlan } from '../../../src/cli/plan-command.ts'
import type { TopicSyncPlan } from '../../../src/metadata/topic-sync-plan.ts'

function topicPlan (overrides: Partial<TopicSyncPlan>): TopicSyncPlan {
  return { flow: 'A->B', topics: [], create: [], addPartitions: [], alterConfigs: [], problems: [], warnings: [], configsUnread: [], deletedOnSource: [], recreatedOnSource: [], ...overrides }
}

describe('renderPlan', () => {
  it('shows a remote topic with more partitions than its source as a warning of a flow in sync: it is replicated, nothing is to change', () => {
    const warning = { topic: 't', remoteTopic: 'A.t', message: 'remote topic A.t on B has 4 partitions but source topic t on A has 2: ...' }
    const text = renderPlan({ flow: 'A->B', topics: topicPlan({ topics: [{ source: 't', remote: 'A.t', partitions: 2 }], warnings: [warning] }), acls: null })
    assert.equal(text, 'flow A->B: in sync, nothing to do\n  ! remote topic A.t on B has 4 partitions but source topic t on A has 2: ...\n')
  })
})
