import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { flowOf, parse, problemFor, problemsOf, twoClusters, warningsFor } from './fixtures.ts'

describe('the keys of a flow\'s group', () => {
  it('default to group kmirror-<source>-<target> and Connect\'s timeouts', () => {
    const flow = flowOf(parse(twoClusters()), 'A->B')
    assert.deepEqual([flow.groupId, flow.sessionTimeoutMs, flow.heartbeatIntervalMs, flow.rebalanceTimeoutMs], ['kmirror-A-B', 10_000, 3000, 60_000])
    assert.equal(flowOf(parse(twoClusters()), 'B->A').groupId, 'kmirror-B-A')
  })

  it('take timeouts at top level for every flow and per flow, the group id per flow only', () => {
    const config = parse(twoClusters('session.timeout.ms = 20000', 'A->B.heartbeat.interval.ms = 5000', 'A->B.rebalance.timeout.ms = 30000', 'A->B.group.id = mirrors-ab'))
    const flow = flowOf(config, 'A->B')
    assert.deepEqual([flow.groupId, flow.sessionTimeoutMs, flow.heartbeatIntervalMs, flow.rebalanceTimeoutMs], ['mirrors-ab', 20_000, 5000, 30_000])
    assert.equal(flowOf(config, 'B->A').sessionTimeoutMs, 20_000)
    assert.deepEqual(warningsFor(config, 'A->B.group.id'), [])
  })

  it('never read MM2\'s worker group (B.group.id) or a top-level group.id, and say so', () => {
    const config = parse(twoClusters('B.group.id = A-mm2', 'group.id = all'))
    assert.equal(flowOf(config, 'A->B').groupId, 'kmirror-A-B')
    assert.deepEqual(warningsFor(config, 'B.group.id'), ['is read as a property of cluster B, which kmirror does not use for group.id: set it per flow, e.g. A->B.group.id'])
    assert.match(warningsFor(config, 'group.id')[0]!, /set it per flow, e.g. A->B.group.id/)
  })

  it('refuse a heartbeat interval not below the session timeout', () => {
    const problem = problemFor(problemsOf(twoClusters('A->B.heartbeat.interval.ms = 10000')), 'A->B.heartbeat.interval.ms')
    assert.match(problem.message, /not below session.timeout.ms \(10000\)/)
  })

  it('refuse a rebalance timeout not above twice the heartbeat interval', () => {
    const problem = problemFor(problemsOf(twoClusters('A->B.rebalance.timeout.ms = 6000')), 'A->B.rebalance.timeout.ms')
    assert.match(problem.message, /is 6000, not above twice heartbeat.interval.ms \(3000\)/)
    assert.equal(flowOf(parse(twoClusters('A->B.rebalance.timeout.ms = 6001')), 'A->B').rebalanceTimeoutMs, 6001)
  })
})
