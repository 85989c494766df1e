import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeConfig, selectFlows } from '../../../src/config/load.ts'
import { flowOf, parse, problemFor, problemsOf, twoClusters } from './fixtures.ts'

describe('exactly.once.source.support', () => {
  it('is read from the target cluster\'s worker config, as MM2 does: B.<key> applies to the flows into B', () => {
    const config = parse(twoClusters('B->A.enabled = true', 'B.exactly.once.source.support = enabled'))
    assert.equal(flowOf(config, 'A->B').exactlyOnce, true)
    assert.equal(flowOf(config, 'B->A').exactlyOnce, false)
  })

  it('is taken at top level too (kmirror extension), the cluster-level value winning; preparing and disabled are at-least-once', () => {
    assert.equal(flowOf(parse(twoClusters('exactly.once.source.support = ENABLED')), 'A->B').exactlyOnce, true)
    assert.equal(flowOf(parse(twoClusters('exactly.once.source.support = enabled', 'B.exactly.once.source.support = disabled')), 'A->B').exactlyOnce, false)
    assert.equal(flowOf(parse(twoClusters('B.exactly.once.source.support = preparing')), 'A->B').exactlyOnce, false)
    assert.equal(flowOf(parse(twoClusters()), 'A->B').exactlyOnce, false)
  })

  it('refuses a read_uncommitted source read, naming the key and the fix', () => {
    const problem = problemFor(problemsOf(twoClusters('B.exactly.once.source.support = enabled', 'A.consumer.isolation.level = read_uncommitted')), 'A.consumer.isolation.level')
    assert.match(problem.message, /read_uncommitted while flow A->B runs exactly-once \(B\.exactly\.once\.source\.support = enabled\).*Set A\.consumer\.isolation\.level = read_committed/)
  })

  it('is explained by validate: the transactional id, its ACLs and the brokers\' transaction log settings', () => {
    const on = parse(twoClusters('B.exactly.once.source.support = enabled'))
    const text = describeConfig(on, selectFlows(on))
    assert.match(text, /exactly\.once\.source\.support +enabled: every round is a transaction on B \(transactional id kmirror-A-B-<member name>, transaction timeout 60000 ms\)/)
    assert.match(text, /needs WRITE on the transactional ids prefixed kmirror-A-B- and DESCRIBE on the groups prefixed kmirror-A-B- on B/)
    const shorter = parse(twoClusters('B.exactly.once.source.support = enabled', 'B.producer.transaction.timeout.ms = 20000'))
    assert.match(describeConfig(shorter, selectFlows(shorter)), /transaction timeout 20000 ms/)
    assert.match(text, /transaction\.state\.log\.replication\.factor/)
    const off = parse(twoClusters())
    assert.match(describeConfig(off, selectFlows(off)), /exactly\.once\.source\.support +at-least-once \(set B\.exactly\.once\.source\.support = enabled/)
  })

  it('warns of a transaction timeout the flow\'s own waits would eat up, naming the key, the other key and the fix; refuses one under 1000', () => {
    const warningsFor = (...lines: string[]) => parse(twoClusters('B.exactly.once.source.support = enabled', ...lines)).warnings.filter(w => (w.key ?? '').includes('transaction.timeout.ms'))
    assert.deepEqual(warningsFor(), [])
    assert.deepEqual(warningsFor('B.producer.transaction.timeout.ms = 900000'), [])
    const [short] = warningsFor('B.producer.transaction.timeout.ms = 20000')
    assert.equal(short?.key, 'B.producer.transaction.timeout.ms')
    assert.match(short!.message, /^is 20000 for flow A->B, not above request\.timeout\.ms \(30000\) of the target's producer: .*set it well above/)
    const [coordinator] = warningsFor('B.producer.transaction.timeout.ms = 5000', 'B.producer.request.timeout.ms = 2000')
    assert.match(coordinator!.message, /^is 5000 for flow A->B: below 10000 .*every 10 s/)
    const [long] = warningsFor('B.producer.transaction.timeout.ms = 900001')
    assert.match(long!.message, /^is 900001 for flow A->B, above the brokers' default transaction\.max\.timeout\.ms \(900000\): unless the target B's brokers raised it, the flow stops at start with INVALID_TRANSACTION_TIMEOUT \(exit 3\)/)
    assert.deepEqual(parse(twoClusters('B.producer.transaction.timeout.ms = 20000')).warnings.filter(w => (w.key ?? '').includes('transaction.timeout.ms')), [], 'at-least-once: not used')
    assert.ok(problemFor(problemsOf(twoClusters('B.exactly.once.source.support = enabled', 'B.producer.transaction.timeout.ms = 999')), 'B.producer.transaction.timeout.ms'))
  })
})
