/** What ACL sync tells of the bindings it does not copy (metadata/acl-reports.ts): each once, again when its reason changes. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { logNewSkips, withWarning } from '../../../src/metadata/acl-reports.ts'
import { AclSkipReasons } from '../../../src/metadata/acl-rules.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { acl } from './acl-fixtures.ts'

describe('logNewSkips', () => {
  it('tells a skip once across runs, and again, with its warning, when the same binding is skipped for another reason', () => {
    const logs = memoryLogger()
    const binding = acl('allow read topic check prefixed')
    const quiet = { binding, reason: AclSkipReasons.PREFIX_NOT_REPLICATED }
    const warned = { binding, reason: AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC, warning: 'ACL ALLOW READ on topics prefixed check for User:alice is not copied: ...' }
    let seen = logNewSkips([quiet], new Set(), logs.log)
    seen = logNewSkips([quiet], seen, logs.log)
    assert.equal(logs.lines.filter(l => l.level === LogLevels.debug).length, 1)
    // (a topic `checkout` now replicated: the prefix covers one, and A.check would cover A.checkpoints.internal)
    seen = logNewSkips([warned], seen, logs.log)
    logNewSkips([warned], seen, logs.log)
    assert.deepEqual(logs.at(LogLevels.warn).map(l => l.msg), [warned.warning])
  })

  it('tells a skip again when its warning changes (an equal binding someone else made appeared on the target)', () => {
    const logs = memoryLogger()
    const binding = acl('allow read topic check prefixed')
    const plain = { binding, reason: AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC, warning: 'ACL ... is not copied: ...' }
    const foreign = { ...plain, warning: 'ACL ... is not copied: .... A binding equal to that copy ... is on cluster B already' }
    let seen = logNewSkips([plain], new Set(), logs.log)
    seen = logNewSkips([foreign], seen, logs.log)
    logNewSkips([foreign], seen, logs.log)
    assert.deepEqual(logs.at(LogLevels.warn).map(l => l.msg), [plain.warning, foreign.warning])
  })
})

describe('withWarning', () => {
  it('names MM2 among the makers of a foreign literal copy (MM2 copies literal bindings), not of a prefixed one', () => {
    const deny = acl('deny read topic orders User:alice')
    const literal = { binding: acl('allow all topic orders'), reason: AclSkipReasons.NARROWED_BY_UNCOPIED_DENY, narrowedBy: deny, copy: acl('allow all topic A.orders') }
    const rules = { kmirrorTopics: [] }
    assert.match(withWarning(literal, rules, 'B', true).warning ?? '', /is on cluster B already, not made by kmirror \(by hand, by MM2 \(which copies literal topic bindings\), or by a kmirror older than its ownership record\)/)
    const prefixed = { ...literal, binding: acl('allow all topic ord prefixed'), copy: acl('allow all topic A.ord prefixed') }
    assert.match(withWarning(prefixed, rules, 'B', true).warning ?? '', /not made by kmirror \(by hand, or by a kmirror older than its ownership record\)/)
    assert.doesNotMatch(withWarning(literal, rules, 'B', false).warning ?? '', /not made by kmirror/)
    // (MM2 copies no group binding)
    const group = { ...literal, binding: acl('allow read group orders-app'), copy: acl('allow read group orders-app') }
    assert.match(withWarning(group, rules, 'B', true).warning ?? '', /not made by kmirror \(by hand, or by a kmirror older than its ownership record\)/)
  })
})
