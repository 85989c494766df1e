import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { TopicConfigEntry } from '../../../src/kafka/admin-client.ts'
import { selectTopicConfigs } from '../../../src/metadata/remote-topics.ts'
import { compileJavaRegexList } from '../../../src/policy/java-regex.ts'

/** MM2's default `config.properties.exclude` (mm2-spec §1.4), as the properties file spells it. */
const MM2_DEFAULT_EXCLUDE = [
  'follower\\.replication\\.throttled\\.replicas',
  'leader\\.replication\\.throttled\\.replicas',
  'message\\.timestamp\\.difference\\.max\\.ms',
  'message\\.timestamp\\.type',
  'unclean\\.leader\\.election\\.enable',
  'min\\.insync\\.replicas'
]

/** The exclude list of flow A->B in a configuration with the given extra lines, compiled as RemoteTopics does. */
function excludeOf (...lines: string[]): RegExp | null {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n'), 'mm2.properties')
  const flow = config.flows.find(f => f.name === 'A->B')!
  return compileJavaRegexList(flow.configPropertiesExclude)
}

function entry (name: string, value: string | null, overrides: Partial<TopicConfigEntry> = {}): TopicConfigEntry {
  return { name, value, source: 'topic', readOnly: false, sensitive: false, ...overrides }
}

describe('selectTopicConfigs', () => {
  const defaultExclude = excludeOf()

  it('uses MM2\'s default exclude list plus KIP-937\'s timestamp bounds when config.properties.exclude is not set', () => {
    const config = parseConfig('clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true', 'mm2.properties')
    assert.deepEqual(config.flows.find(f => f.name === 'A->B')!.configPropertiesExclude, [...MM2_DEFAULT_EXCLUDE, 'message\\.timestamp\\.before\\.max\\.ms', 'message\\.timestamp\\.after\\.max\\.ms'])
    assert.deepEqual(selectTopicConfigs([entry('message.timestamp.before.max.ms', '3600000'), entry('message.timestamp.after.max.ms', '60000'), entry('retention.ms', '1')], defaultExclude), { 'retention.ms': '1' })
  })

  it('copies values set on the topic and dynamic broker values, and nothing from static or default sources', () => {
    const selected = selectTopicConfigs([
      entry('retention.ms', '3600000', { source: 'topic' }),
      entry('compression.type', 'zstd', { source: 'dynamic-broker' }),
      entry('segment.bytes', '1048576', { source: 'static-broker' }),
      entry('cleanup.policy', 'delete', { source: 'default' })
    ], defaultExclude)
    assert.deepEqual(selected, { 'retention.ms': '3600000', 'compression.type': 'zstd' })
  })

  it('with use.defaults.from = source, copies default values too, but never static broker values', () => {
    const entries = [
      entry('retention.ms', '3600000', { source: 'topic' }),
      entry('segment.bytes', '1048576', { source: 'static-broker' }),
      entry('cleanup.policy', 'delete', { source: 'default' }),
      entry('retention.bytes', null, { source: 'default' })
    ]
    assert.deepEqual(selectTopicConfigs(entries, defaultExclude, 'source'), { 'retention.ms': '3600000', 'cleanup.policy': 'delete' })
    assert.deepEqual(selectTopicConfigs(entries, defaultExclude, 'target'), { 'retention.ms': '3600000' })
  })

  it('never copies read-only or sensitive entries, nor entries without a value', () => {
    const selected = selectTopicConfigs([
      entry('retention.ms', '1', { readOnly: true }),
      entry('sasl.secret', 'x', { sensitive: true }),
      entry('retention.bytes', null),
      entry('cleanup.policy', 'compact')
    ], defaultExclude)
    assert.deepEqual(selected, { 'cleanup.policy': 'compact' })
  })

  it('drops every name of MM2\'s default exclude list even when it is set on the topic', () => {
    const names = [
      'follower.replication.throttled.replicas', 'leader.replication.throttled.replicas', 'message.timestamp.difference.max.ms',
      'message.timestamp.type', 'unclean.leader.election.enable', 'min.insync.replicas'
    ]
    assert.deepEqual(selectTopicConfigs(names.map(n => entry(n, '1')), defaultExclude), {})
  })

  it('matches the exclude patterns against the whole name, with escaped dots matching only dots', () => {
    const selected = selectTopicConfigs([
      entry('min.insync.replicas.extra', 'a'),
      entry('x.min.insync.replicas', 'b'),
      entry('minXinsync.replicas', 'c'),
      entry('message.timestamp.type', 'LogAppendTime')
    ], defaultExclude)
    assert.deepEqual(selected, { 'min.insync.replicas.extra': 'a', 'x.min.insync.replicas': 'b', 'minXinsync.replicas': 'c' })
  })

  it('copies an empty string value, which is a value', () => {
    assert.deepEqual(selectTopicConfigs([entry('leader.replication.throttled.replicas', '')], null), { 'leader.replication.throttled.replicas': '' })
  })

  it('applies a user exclude list instead of the default one (MM2\'s integration test: delete\\.retention\\..*)', () => {
    const exclude = excludeOf('config.properties.exclude = delete\\.retention\\..*')
    const selected = selectTopicConfigs([
      entry('delete.retention.ms', '1000'),
      entry('min.insync.replicas', '2'),
      entry('retention.ms', '5')
    ], exclude)
    assert.deepEqual(selected, { 'min.insync.replicas': '2', 'retention.ms': '5' })
  })

  it('excludes nothing by name with an empty exclude list', () => {
    assert.equal(excludeOf('config.properties.exclude = '), null)
    assert.deepEqual(selectTopicConfigs([entry('min.insync.replicas', '2')], null), { 'min.insync.replicas': '2' })
  })

  it('reads the old key config.properties.blacklist as the exclude list', () => {
    const exclude = excludeOf('config.properties.blacklist = retention\\..*')
    assert.deepEqual(selectTopicConfigs([entry('retention.ms', '1'), entry('min.insync.replicas', '2')], exclude), { 'min.insync.replicas': '2' })
  })
})
