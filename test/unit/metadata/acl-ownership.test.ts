import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import { AclOwnershipStore, aclOwnershipTopic, decodeOwnedAcl, encodeOwnedAcl } from '../../../src/metadata/acl-ownership.ts'
import { TopicLog } from '../../fakes/topic-log.ts'
import { acl } from './acl-fixtures.ts'

describe('the ACL ownership record', () => {
  it('lives in mm2-acls.<source>.internal, an MM2-internal name no flow replicates', () => {
    assert.equal(aclOwnershipTopic('A'), 'mm2-acls.A.internal')
  })

  it('keys a binding by its seven fields, and reads back the same binding', () => {
    const b = acl('deny describe topic orders- prefixed User:* host=10.0.0.1')
    assert.equal(encodeOwnedAcl(b).toString(), '["topic","prefixed","orders-","User:*","10.0.0.1","describe","deny"]')
    assert.deepEqual(decodeOwnedAcl(encodeOwnedAcl(b)), b)
  })

  it('refuses a key that is not such a binding', () => {
    assert.throws(() => decodeOwnedAcl(Buffer.from('["topic"]')), /unreadable key in an ACL ownership topic/)
  })

  it('reads again at every load what another instance recorded or forgot since (the sync-acls job moves between instances)', async () => {
    // Given two instances of a flow on one ownership topic
    const log = new TopicLog()
    const flow = { source: { alias: 'A' }, checkpointsTopicReplicationFactor: 1 } as unknown as FlowConfig
    const admin = { createTopic: async () => 'exists' as const, describeTopics: async (names: readonly string[]) => new Map(names.map(n => [n, { name: n, id: 'x', partitions: 1 }])) }
    const x = new AclOwnershipStore(flow, { admin, fetcher: log, writer: log })
    const y = new AclOwnershipStore(flow, { admin, fetcher: log, writer: log })
    await x.load()
    // When Y (running the job meanwhile) records carol's binding, then the job comes back to X
    await y.load()
    await y.record([acl('allow read topic A.orders User:carol')])
    await x.load()
    // Then X knows it owns it, and deletes it when its source binding goes; and it sees Y's forgetting too
    assert.equal(x.isOwned(acl('allow read topic A.orders User:carol')), true)
    await y.forget([acl('allow read topic A.orders User:carol')])
    await x.load()
    assert.deepEqual(x.owned(), [])
  })
})
