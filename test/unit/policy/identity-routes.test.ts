import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { identityRelays, type MeshFlow } from '../../../src/policy/identity-routes.ts'

const flows = (...names: string[]): MeshFlow[] => names.map(n => ({ source: n[0]!, target: n[1]! }))
const fullMesh = (clusters: string[]): MeshFlow[] => clusters.flatMap(s => clusters.filter(t => t !== s).map(t => ({ source: s, target: t })))

describe('identityRelays', () => {
  it('in a full mesh every flow relays only its source\'s own records', () => {
    const relays = identityRelays(['A', 'B', 'C', 'D'], fullMesh(['A', 'B', 'C', 'D']))
    assert.equal(relays.size, 12)
    for (const [name, origins] of relays) assert.deepEqual(origins, [name[0]], name)
  })

  it('in a ring every flow relays every origin but its target', () => {
    assert.deepEqual(Object.fromEntries(identityRelays(['A', 'B', 'C', 'D'], flows('AB', 'BC', 'CD', 'DA'))), {
      'A->B': ['A', 'C', 'D'], 'B->C': ['A', 'B', 'D'], 'C->D': ['A', 'B', 'C'], 'D->A': ['B', 'C', 'D']
    })
  })

  it('gives each cluster exactly one parent per origin, the shortest route, ties to the first alias', () => {
    // A->B, A->C, B->D, C->D: D gets A's records through B only
    const relays = identityRelays(['A', 'B', 'C', 'D'], flows('AB', 'AC', 'BD', 'CD'))
    assert.deepEqual(Object.fromEntries(relays), { 'A->B': ['A'], 'A->C': ['A'], 'B->D': ['A', 'B'], 'C->D': ['C'] })
  })
})
