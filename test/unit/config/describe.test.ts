import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeConfig, parseConfig, selectFlows } from '../../../src/config/load.ts'
import { parse, twoClusters } from './fixtures.ts'

describe('describeConfig', () => {
  const config = parse(twoClusters(
    'security.protocol = SASL_PLAINTEXT', 'sasl.mechanism = PLAIN',
    'sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="topsecret";',
    'A->B.topics = orders.*', 'topic = x'
  ))
  const text = describeConfig(config, selectFlows(config))

  it('never prints a secret', () => {
    assert.ok(!text.includes('topsecret'))
    assert.ok(text.includes('password="[redacted]"'))
  })

  it('lists the clusters, every flow with its state, and the key settings of the selected flows', () => {
    assert.ok(text.includes('clusters: A, B\n'))
    assert.ok(text.includes('  A->B  enabled\n'))
    assert.ok(text.includes('  B->A  disabled (set B->A.enabled = true to replicate)\n'))
    assert.match(text, /\n {2}topics +orders\.\*\n/)
    assert.match(text, /\n {2}offset\.storage\.topic +mm2-offsets\.A\.internal on B \(25 partitions, replication factor 3\)\n/)
    assert.match(text, /\n {2}offset\.flush\.interval\.ms +5000\n/)
    assert.match(text, /\n {2}source A: a1:9092, a2:9092\n {4}consumer:\n/)
    assert.ok(!text.includes('flow B->A'))
  })

  it('ends with the warnings', () => {
    assert.match(text, /warnings \(1\):\n {2}- topic: is not a key kmirror or MM2 knows, so it is ignored \(did you mean topics\?\)\n$/)
  })
})

describe('describeConfig with config providers', () => {
  it('hides every value a provider returned, whatever its key, and shows the rest', () => {
    const config = parseConfig(twoClusters(
      'config.providers = env', 'config.providers.env.class = EnvVarConfigProvider',
      'B.bootstrap.servers = ${env:KM_BOOTSTRAP}', 'A.consumer.client.rack = ${env:KM_RACK}', 'A->B.topics = orders'
    ), 'mm2.properties', { env: { KM_BOOTSTRAP: 'broker-from-env:9092', KM_RACK: 'rack-from-env' } })
    const text = describeConfig(config, selectFlows(config))
    assert.ok(!text.includes('broker-from-env') && !text.includes('rack-from-env'), text)
    assert.match(text, /\n {2}target B: \[redacted\]\n/)
    assert.match(text, /\n {6}client\.rack = \[redacted\]\n/)
    assert.match(text, /\n {2}topics +orders\n/)
  })
})
