import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { topologyGraph } from '../../../src/heartbeat/topology-graph.ts'
import type { ClusterTopology } from '../../../src/heartbeat/topology-reader.ts'

const cluster = (alias: string, upstream: [string, number][]): ClusterTopology =>
  ({ alias, reachable: true, upstream: upstream.map(([a, hops]) => ({ alias: a, hops, via: `${a}.heartbeats` })), heartbeatTopics: [] })

describe('topologyGraph', () => {
  it('Given a chain A->B->C and A->D, then the links are the 1-hop upstreams and the columns follow the chain', () => {
    const graph = topologyGraph([cluster('A', []), cluster('B', [['A', 1]]), cluster('C', [['B', 1], ['A', 2]]), cluster('D', [['A', 1]])], [])
    assert.deepEqual(graph.links, [
      { from: 'A', to: 'B', heartbeats: true, flow: null },
      { from: 'A', to: 'D', heartbeats: true, flow: null },
      { from: 'B', to: 'C', heartbeats: true, flow: null }
    ])
    assert.deepEqual(graph.nodes.map(n => [n.alias, n.column, n.row]), [['A', 0, 0], ['B', 1, 0], ['C', 2, 0], ['D', 1, 1]])
    assert.deepEqual(graph.nodes.find(n => n.alias === 'C')!.upstream, [{ alias: 'B', hops: 1 }, { alias: 'A', hops: 2 }])
  })

  it('Given active-active A<->B (a cycle, no root), then A is taken as the root and both links are drawn', () => {
    const graph = topologyGraph([cluster('B', [['A', 1]]), cluster('A', [['B', 1]])], [{ name: 'A->B', source: 'A', target: 'B' }])
    assert.deepEqual(graph.nodes.map(n => [n.alias, n.column, n.row]), [['A', 0, 0], ['B', 1, 0]])
    assert.deepEqual(graph.links, [
      { from: 'A', to: 'B', heartbeats: true, flow: 'A->B' },
      { from: 'B', to: 'A', heartbeats: true, flow: null }
    ])
  })

  it('Given a flow of this instance whose target holds no heartbeat topic yet, then its link is there without heartbeats', () => {
    const graph = topologyGraph([cluster('A', []), cluster('B', [])], [{ name: 'A->B', source: 'A', target: 'B' }])
    assert.deepEqual(graph.links, [{ from: 'A', to: 'B', heartbeats: false, flow: 'A->B' }])
  })

  it('Given an unreachable cluster, then its node says so with the error, and it is still placed', () => {
    const graph = topologyGraph([cluster('A', []), { alias: 'B', reachable: false, error: 'listing the topics of cluster B took more than 5000 ms' }], [{ name: 'A->B', source: 'A', target: 'B' }])
    assert.deepEqual(graph.nodes[1], { alias: 'B', reachable: false, error: 'listing the topics of cluster B took more than 5000 ms', upstream: [], column: 1, row: 0 })
  })

  it('Given two separate pairs, then each starts at column 0', () => {
    const graph = topologyGraph([cluster('A', []), cluster('B', [['A', 1]]), cluster('X', []), cluster('Y', [['X', 1]])], [])
    assert.deepEqual(graph.nodes.map(n => [n.alias, n.column, n.row]), [['A', 0, 0], ['B', 1, 0], ['X', 0, 1], ['Y', 1, 1]])
  })
})
