import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse, twoClusters, warningsFor } from './fixtures.ts'

function only (lines: string[], key: string): string {
  const messages = warningsFor(parse(twoClusters(...lines)), key)
  assert.equal(messages.length, 1, `one warning for ${key}: ${JSON.stringify(messages)}`)
  return messages[0] as string
}

describe('warnings about unknown and misspelt keys', () => {
  it('suggests the closest top-level key for an unknown one', () => {
    assert.equal(only(['topic = orders'], 'topic'), 'is not a key kmirror or MM2 knows, so it is ignored (did you mean topics?)')
  })

  it('suggests the closest per-flow key, written with the flow prefix', () => {
    assert.match(only(['A->B.enable = true'], 'A->B.enable'), /ignored \(did you mean A->B\.enabled\?\)$/)
  })

  it('suggests the closest cluster key', () => {
    assert.match(only(['A.bootstrap.server = a:1'], 'A.bootstrap.server'), /did you mean A\.bootstrap\.servers\?/)
  })

  it('says nothing about a valid file', () => {
    assert.deepEqual(parse(twoClusters('topics = a', 'A.consumer.max.poll.records = 5', 'A->B.groups = g.*')).warnings, [])
  })
})

describe('warnings about keys MM2 silently drops at top level (mm2-spec §1.1 pitfall)', () => {
  it('says a top-level use.defaults.from must be given per flow', () => {
    assert.match(only(['use.defaults.from = source'], 'use.defaults.from'), /MM2 ignores it at top level, and so does kmirror: set it per flow, e\.g\. A->B\.use\.defaults\.from/)
  })

  it('says a top-level consumer.* setting must be given per cluster or per flow', () => {
    assert.match(only(['consumer.max.poll.records = 5'], 'consumer.max.poll.records'), /set it per cluster, e\.g\. A\.consumer\.max\.poll\.records, or per flow, e\.g\. A->B\.consumer\.max\.poll\.records/)
  })

  it('says a connector key written on a cluster is not a connector setting', () => {
    assert.match(only(['A.topics = orders'], 'A.topics'), /set A->B\.topics for one flow, or topics at top level for all/)
  })

  it('says per-flow connection keys do not reach clients', () => {
    assert.match(only(['A->B.security.protocol = SSL'], 'A->B.security.protocol'), /has no effect on clients per flow: set A\.security\.protocol/)
  })

  it('says a per-flow producer key reaches the data producer under kmirror but only the offset-syncs producer under MM2', () => {
    for (const key of ['A->B.producer.linger.ms', 'A->B.target.producer.linger.ms']) {
      assert.equal(only([`${key} = 50`], key), 'is read by kmirror\'s target producer, which writes the replicated records too; MM2 applies it to its offset-syncs producer only ' +
        '(its replicated records go through the Connect worker\'s producer): for the same effect under both, set B.producer.linger.ms or A->B.producer.override.linger.ms')
    }
    assert.deepEqual(warningsFor(parse(twoClusters('A->B.producer.override.linger.ms = 50', 'B.producer.linger.ms = 5')), 'A->B.producer.override.linger.ms'), [])
  })

  it('says a worker key written per flow belongs to the target cluster', () => {
    assert.match(only(['A->B.offset.flush.interval.ms = 10'], 'A->B.offset.flush.interval.ms'), /set B\.offset\.flush\.interval\.ms/)
  })
})

describe('warnings about surprising values', () => {
  it('explains that A->B.enabled = yes is read as false', () => {
    assert.match(only(['B->A.enabled = yes'], 'B->A.enabled'), /"yes" is read as false \(MM2 reads it with Boolean\.parseBoolean\)/)
  })

  it('explains what read_uncommitted means for replication', () => {
    assert.match(only(['A.consumer.isolation.level = read_uncommitted'], 'A.consumer.isolation.level'), /copy records of aborted and still-open transactions/)
    assert.match(only(['A->B.source.consumer.isolation.level = read_uncommitted '], 'A->B.source.consumer.isolation.level'), /aborted/)
  })

  it('points out that an inline # comment is part of the value', () => {
    assert.match(only(['A->B.topics = orders # main'], 'A->B.topics'), /contains " #", which is part of the value, not a comment/)
  })

  it('names keys kmirror accepts but ignores, only when set to something other than the default', () => {
    assert.match(only(['tasks.max = 8'], 'tasks.max'), /^kmirror ignores it: kmirror copies every partition of a flow in one process/)
    assert.deepEqual(warningsFor(parse(twoClusters('key.converter = org.apache.kafka.connect.converters.ByteArrayConverter')), 'key.converter'), [])
  })

  it('names renamed keys, which kmirror still reads like MM2 3.x', () => {
    const config = parse(twoClusters('topics.blacklist = secret.*'))
    assert.match(warningsFor(config, 'topics.blacklist')[0] ?? '', /was renamed to topics\.exclude/)
    assert.deepEqual(config.flows[0]?.topicsExclude, ['secret.*'])
  })

  it('says a use.defaults.from value other than source means target, as MM2 reads it as a plain string', () => {
    assert.match(only(['A->B.use.defaults.from = both'], 'A->B.use.defaults.from'), /"both" is not one of source, target, so it means target/)
  })

  it('names keys set twice, with their lines', () => {
    assert.equal(only(['topics = a', 'topics = b'], 'topics'), 'is set on lines 5, 6; the last one (line 6) wins, as in Java: keep only one')
  })

  it('warns that a top-level enabled = true turns on every flow', () => {
    assert.match(only(['enabled = true'], 'enabled'), /turns on every flow/)
  })

  it('warns about an alias containing the replication policy separator', () => {
    const config = parse('clusters = us.east, B\nus.east.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nus.east->B.enabled = true')
    assert.match(warningsFor(config, 'clusters')[0] ?? '', /alias us\.east contains the replication policy separator "\."/)
    assert.equal(config.flows[0]?.name, 'us.east->B')
    assert.equal(config.flows[0]?.enabled, true)
  })
})
