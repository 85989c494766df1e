/** What ACL sync tells of the bindings it does not copy (metadata/acl-reports.ts): each once, again when its reason changes. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { logNewSkips } from '../../../src/metadata/acl-reports.ts'
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
})
