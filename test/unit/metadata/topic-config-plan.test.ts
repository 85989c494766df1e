import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ConfigSourceKind, TopicConfigEntry } from '../../../src/kafka/admin-client.ts'
import { configSyncRules, planTopicConfigChanges, type ConfigSyncRules } from '../../../src/metadata/topic-config-plan.ts'
import { compileJavaRegexList } from '../../../src/policy/java-regex.ts'

function entry (name: string, value: string | null, source: ConfigSourceKind, overrides: Partial<TopicConfigEntry> = {}): TopicConfigEntry {
  return { name, value, source, readOnly: false, sensitive: false, ...overrides }
}

/** MM2's integration tests exclude `delete.retention.ms` (mm2-spec §10). */
const MM2_TEST_EXCLUDE = compileJavaRegexList(['delete\\.retention\\..*'])
const targetDefaults: ConfigSyncRules = { exclude: MM2_TEST_EXCLUDE, useDefaultsFrom: 'target' }
const sourceDefaults: ConfigSyncRules = { exclude: MM2_TEST_EXCLUDE, useDefaultsFrom: 'source' }

describe('planTopicConfigChanges', () => {
  it('sets a key whose source value differs from the target\'s, naming the old and new values', () => {
    const changes = planTopicConfigChanges(
      [entry('retention.bytes', '1000', 'topic')],
      [entry('retention.bytes', '2000', 'topic')],
      targetDefaults)
    assert.deepEqual(changes, [{ name: 'retention.bytes', op: 'set', oldValue: '2000', newValue: '1000' }])
  })

  it('sends nothing when the values are already equal, wherever the target\'s value comes from', () => {
    assert.deepEqual(planTopicConfigChanges(
      [entry('retention.bytes', '1000', 'topic'), entry('compression.type', 'zstd', 'dynamic-broker')],
      [entry('retention.bytes', '1000', 'topic'), entry('compression.type', 'zstd', 'default')],
      targetDefaults), [])
  })

  it('never touches an excluded key, even when it differs (MM2 testSyncTopicConfigs: delete.retention.ms stays 2000)', () => {
    const changes = planTopicConfigChanges(
      [entry('delete.retention.ms', '1000', 'topic'), entry('retention.bytes', '1000', 'topic')],
      [entry('delete.retention.ms', '2000', 'topic'), entry('retention.bytes', '2000', 'topic')],
      targetDefaults)
    assert.deepEqual(changes.map(c => c.name), ['retention.bytes'])
  })

  it('with use.defaults.from=target, reverts a target override of a key that is a default on the source (MM2 testReplicateTargetDefault)', () => {
    const changes = planTopicConfigChanges(
      [entry('retention.bytes', '-1', 'default')],
      [entry('retention.bytes', '1000', 'topic')],
      targetDefaults)
    assert.deepEqual(changes, [{ name: 'retention.bytes', op: 'delete', oldValue: '1000', newValue: null }])
  })

  it('with use.defaults.from=target, sends no revert where the target has no override (MM2 would send one every period)', () => {
    assert.deepEqual(planTopicConfigChanges(
      [entry('retention.bytes', '-1', 'default'), entry('compression.type', 'producer', 'default'), entry('segment.bytes', '1073741824', 'default')],
      [entry('retention.bytes', '-1', 'default'), entry('compression.type', 'lz4', 'dynamic-broker'), entry('segment.bytes', '5000', 'static-broker')],
      targetDefaults), [])
  })

  it('with use.defaults.from=source, copies the source default as a value (MM2 testReplicateSourceDefault: retention.bytes back to -1)', () => {
    const changes = planTopicConfigChanges(
      [entry('retention.bytes', '-1', 'default'), entry('delete.retention.ms', '86400000', 'default')],
      [entry('retention.bytes', '2000', 'topic'), entry('delete.retention.ms', '2000', 'topic')],
      sourceDefaults)
    assert.deepEqual(changes, [{ name: 'retention.bytes', op: 'set', oldValue: '2000', newValue: '-1' }])
  })

  it('with use.defaults.from=source, sends nothing where the target\'s effective value already equals the source default', () => {
    assert.deepEqual(planTopicConfigChanges([entry('retention.bytes', '-1', 'default')], [entry('retention.bytes', '-1', 'default')], sourceDefaults), [])
  })

  it('copies dynamic broker values as values (MM2 treats them as non-default)', () => {
    const changes = planTopicConfigChanges([entry('compression.type', 'zstd', 'dynamic-broker')], [entry('compression.type', 'producer', 'default')], targetDefaults)
    assert.deepEqual(changes, [{ name: 'compression.type', op: 'set', oldValue: 'producer', newValue: 'zstd' }])
  })

  it('ignores static-broker, read-only and sensitive source entries', () => {
    assert.deepEqual(planTopicConfigChanges(
      [entry('segment.bytes', '5000', 'static-broker'), entry('retention.ms', '1', 'topic', { readOnly: true }), entry('secret', null, 'topic', { sensitive: true })],
      [entry('segment.bytes', '1073741824', 'default'), entry('retention.ms', '2', 'topic'), entry('secret', 'x', 'topic')],
      targetDefaults), [])
  })

  it('leaves target keys the source does not report alone', () => {
    assert.deepEqual(planTopicConfigChanges([], [entry('retention.ms', '5', 'topic')], targetDefaults), [])
  })

  it('skips a source default the target does not know, but still sends a real value it does not know, so the refusal is reported', () => {
    const changes = planTopicConfigChanges(
      [entry('compression.zstd.level', '3', 'default'), entry('remote.log.copy.disable', 'true', 'topic')],
      [],
      sourceDefaults)
    assert.deepEqual(changes, [{ name: 'remote.log.copy.disable', op: 'set', oldValue: null, newValue: 'true' }])
  })

  it('never changes a key that is read-only on the target', () => {
    assert.deepEqual(planTopicConfigChanges([entry('retention.ms', '1', 'topic')], [entry('retention.ms', '2', 'topic', { readOnly: true })], targetDefaults), [])
  })

  it('returns the changes sorted by key', () => {
    const changes = planTopicConfigChanges(
      [entry('retention.ms', '1', 'topic'), entry('cleanup.policy', 'compact', 'topic'), entry('max.message.bytes', '9', 'topic')],
      [entry('retention.ms', '2', 'topic'), entry('cleanup.policy', 'delete', 'default'), entry('max.message.bytes', '8', 'default')],
      targetDefaults)
    assert.deepEqual(changes.map(c => c.name), ['cleanup.policy', 'max.message.bytes', 'retention.ms'])
  })

  it('reads the exclude list and use.defaults.from of a flow', () => {
    const rules = configSyncRules({ configPropertiesExclude: ['min\\.insync\\.replicas'], useDefaultsFrom: 'source' })
    assert.equal(rules.useDefaultsFrom, 'source')
    assert.equal(rules.exclude?.test('min.insync.replicas'), true)
    assert.equal(rules.exclude?.test('min.insync.replicasX'), false)
    assert.equal(configSyncRules({ configPropertiesExclude: [], useDefaultsFrom: 'target' }).exclude, null)
  })
})
