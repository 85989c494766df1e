import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clientChoice, clientInt, explicitCompression, isolationLevel, startPosition } from '../../../src/config/client-settings.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { flowOf, parse, problemFor, problemsOf, twoClusters, warningsFor } from './fixtures.ts'

describe('client keys of the data path are validated where they are written', () => {
  it('rejects a value that is not a number, naming the key as written', () => {
    assert.equal(problemFor(problemsOf(twoClusters('A.consumer.fetch.max.bytes = lots')), 'A.consumer.fetch.max.bytes').message,
      'must be a whole number (a Java int), not "lots"')
  })

  it('checks every role prefix a flow or cluster key can have, and the minimum of each key', () => {
    const problems = problemsOf(twoClusters(
      'A->B.source.consumer.max.partition.fetch.bytes = -1', 'A->B.consumer.fetch.max.wait.ms = 1.5', 'B.producer.max.request.size = 1MB',
      'A->B.producer.override.request.timeout.ms = -5', 'B.admin.retry.backoff.ms = soon', 'A.consumer.socket.connection.setup.timeout.ms = -1',
      'B.producer.max.in.flight.requests.per.connection = 0', 'A->B.target.producer.request.timeout.ms = 99999999999'
    ))
    assert.deepEqual(Object.fromEntries(problems.map(p => [p.key, p.message])), {
      'A->B.source.consumer.max.partition.fetch.bytes': 'must be at least 0, not -1',
      'A->B.consumer.fetch.max.wait.ms': 'must be a whole number (a Java int), not "1.5"',
      'B.producer.max.request.size': 'must be a whole number (a Java int), not "1MB"',
      'A->B.producer.override.request.timeout.ms': 'must be at least 0, not -5',
      'B.admin.retry.backoff.ms': 'must be a whole number (a Java long), not "soon"',
      'A.consumer.socket.connection.setup.timeout.ms': 'must be at least 0, not -1',
      'B.producer.max.in.flight.requests.per.connection': 'must be at least 1, not 0',
      'A->B.target.producer.request.timeout.ms': 'must be a whole number (a Java int), not "99999999999"'
    })
  })

  it('rejects isolation.level and compression.type values the Java client rejects (case-sensitive, trimmed)', () => {
    const problems = problemsOf(twoClusters('A.consumer.isolation.level = READ_COMMITTED', 'B.producer.compression.type = brotli'))
    assert.equal(problemFor(problems, 'A.consumer.isolation.level').message, 'must be one of read_committed, read_uncommitted, not "READ_COMMITTED"')
    assert.equal(problemFor(problems, 'B.producer.compression.type').message, 'must be one of none, gzip, snappy, lz4, zstd, not "brotli"')
    parse(twoClusters('A.consumer.isolation.level = read_committed ', 'B.producer.compression.type = zstd'))
  })

  it('does not check a key under a role that does not read it', () => {
    parse(twoClusters('A.admin.fetch.max.bytes = lots', 'B.consumer.compression.type = brotli'))
  })

  it('warns where a client key has no effect: at top level, per cluster without a role, per flow without a role', () => {
    const config = parse(twoClusters('fetch.max.bytes = 1', 'A.request.timeout.ms = 5', 'A->B.compression.type = gzip'))
    assert.deepEqual(warningsFor(config, 'fetch.max.bytes'), ['MM2 ignores it at top level, and so does kmirror (client settings are read per cluster and client role): set it as e.g. A.consumer.fetch.max.bytes'])
    assert.deepEqual(warningsFor(config, 'A.request.timeout.ms'), ['is not read by any client: client settings are read per client role, set A.consumer.request.timeout.ms'])
    assert.deepEqual(warningsFor(config, 'A->B.compression.type'), ['has no effect per flow: client settings are read per client role, set A->B.target.producer.compression.type for this flow or B.producer.compression.type for the cluster'])
  })
})

describe('client settings as the runtime reads them', () => {
  it('reads what the role\'s properties say, else the schema default', () => {
    const flow = flowOf(parse(twoClusters('A.consumer.fetch.max.bytes = 1024', 'B.producer.compression.type = lz4 ', 'A->B.source.consumer.auto.offset.reset = LATEST')), 'A->B')
    assert.equal(clientInt(flow.source.consumer, 'fetch.max.bytes'), 1024)
    assert.equal(clientInt(flow.source.consumer, 'max.partition.fetch.bytes'), 1_048_576)
    assert.equal(clientInt(flow.target.producer, 'request.timeout.ms'), 30_000)
    assert.equal(clientInt(flow.target.producer, 'socket.connection.setup.timeout.ms'), 10_000)
    assert.equal(explicitCompression(flow.target.producer), 'lz4')
    assert.equal(isolationLevel(flow.source.consumer), 'read_committed')
    assert.equal(startPosition(flow.source.consumer), 'latest')
  })

  it('keeps each batch\'s codec when compression.type is not set, and reads an unknown auto.offset.reset as earliest, as MM2 would', () => {
    const config = parse(twoClusters('A.consumer.auto.offset.reset = none'))
    assert.equal(explicitCompression(flowOf(config, 'A->B').target.producer), null)
    assert.equal(clientChoice(flowOf(config, 'A->B').source.consumer, 'auto.offset.reset'), 'earliest')
    assert.match(warningsFor(config, 'A.consumer.auto.offset.reset')[0] ?? '', /"none" is not one of earliest, latest, so it means earliest/)
  })

  it('refuses keys that are not client settings of the schema (a programming error)', () => {
    assert.throws(() => clientInt({}, 'topics'), (err: unknown) => err instanceof KmirrorError && err.code === ErrorCodes.INTERNAL)
    assert.throws(() => clientInt({ 'fetch.max.bytes': 'x' }, 'fetch.max.bytes'), (err: unknown) => err instanceof KmirrorError && err.code === ErrorCodes.CONFIG_INVALID)
  })
})
