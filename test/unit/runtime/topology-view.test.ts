import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig, KmirrorConfig } from '../../../src/config/types.ts'
import type { ClusterTopology } from '../../../src/heartbeat/topology-reader.ts'
import { TopologyView } from '../../../src/runtime/topology-view.ts'

const config = { clusters: ['A', 'B'], flows: [] } as unknown as KmirrorConfig
const flows = [{ name: 'A->B', source: { alias: 'A' }, target: { alias: 'B' } }] as unknown as FlowConfig[]

describe('TopologyView', () => {
  it('reads the clusters once per TTL, shares a read in progress, and puts this instance\'s flows on the links', async () => {
    let reads = 0
    let now = 1_000_000
    const read = async (): Promise<ClusterTopology[]> => {
      reads++
      return [{ alias: 'A', reachable: true, upstream: [], heartbeatTopics: [] }, { alias: 'B', reachable: true, upstream: [{ alias: 'A', hops: 1, via: 'A.heartbeats' }], heartbeatTopics: ['A.heartbeats'] }]
    }
    const view = new TopologyView(config, flows, { read, ttlMs: 10_000, now: () => now })
    const [first, second] = await Promise.all([view.document(), view.document()])
    assert.equal(reads, 1)
    assert.equal(first, second)
    assert.equal(first.readAt, new Date(1_000_000).toISOString())
    assert.deepEqual(first.links, [{ from: 'A', to: 'B', heartbeats: true, flow: 'A->B' }])
    now += 9_999
    await view.document()
    assert.equal(reads, 1)
    now += 1
    await view.document()
    assert.equal(reads, 2)
  })
})
