import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { formatLeastPrivilegeRow, LEAST_PRIVILEGE_ACLS } from '../../helpers/least-privilege.ts'

const OPERATIONS = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')

describe('the least-privilege ACLs of docs/operations.md', () => {
  it('are exactly the table the least-privilege integration test grants, in the same order (source first)', () => {
    const documented = OPERATIONS.split('\n').filter(l => /^\| (source|target) \|/.test(l))
    const expected = [...LEAST_PRIVILEGE_ACLS.filter(r => r.cluster === 'source'), ...LEAST_PRIVILEGE_ACLS.filter(r => r.cluster === 'target')].map(formatLeastPrivilegeRow)
    assert.deepEqual(documented, expected)
  })

  it('name each operation once per row', () => {
    for (const r of LEAST_PRIVILEGE_ACLS) assert.equal(new Set(r.operations).size, r.operations.length, formatLeastPrivilegeRow(r))
  })
})
