import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { aclOwnershipTopic, decodeOwnedAcl, encodeOwnedAcl } from '../../../src/metadata/acl-ownership.ts'
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
})
