import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../src/errors.ts'
import { TimeoutError } from '@platformatic/kafka'
import { kafkaResponseError, toKmirrorError } from '../../../src/kafka/errors.ts'

describe('kafkaResponseError', () => {
  it('Given the cluster\'s alias, when a response carries an error with a hint, then the hint names that cluster\'s keys', () => {
    // 58 = SASL_AUTHENTICATION_FAILED
    const err = kafkaResponseError(58, ErrorCodes.FETCH, 'read metadata of topic t on cluster East', { alias: 'East', protocol: 'SASL_SSL' })
    assert.equal(err.message, 'read metadata of topic t on cluster East: Kafka error SASL_AUTHENTICATION_FAILED; check East.sasl.mechanism and the username and password in East.sasl.jaas.config')
  })

  it('Given no alias, then the hint names the keys without a prefix, never a literal <alias>', () => {
    assert.equal(kafkaResponseError(58, ErrorCodes.FETCH, 'x').message, 'x: Kafka error SASL_AUTHENTICATION_FAILED; check sasl.mechanism and the username and password in sasl.jaas.config')
  })
})

describe('toKmirrorError with a timeout', () => {
  it('Given a request the broker never answered, then the error is TIMEOUT, retriable, and names the action, the brokers tried and the deadline keys', () => {
    const err = toKmirrorError(new TimeoutError('Request timed out', { canRetry: true }), ErrorCodes.FETCH, 'read metadata of 1 topic(s) from cluster East',
      { alias: 'East', protocol: 'PLAINTEXT', brokers: '10.0.0.1:9092' })
    assert.equal(err.code, ErrorCodes.TIMEOUT)
    assert.equal(err.retriable, true)
    assert.match(err.message, /^read metadata of 1 topic\(s\) from cluster East: Request timed out; no answer in time \(brokers tried: 10\.0\.0\.1:9092\)/)
    assert.match(err.message, /East\.<role>\.request\.timeout\.ms and East\.<role>\.socket\.connection\.setup\.timeout\.ms/)
  })

  it('Given a timeout nested in the library\'s aggregate error, then it is still TIMEOUT', () => {
    const nested = new AggregateError([new TimeoutError('Connection to 10.0.0.1:9092 timed out.', { canRetry: true })], 'Cannot connect to any broker.')
    assert.equal(toKmirrorError(nested, ErrorCodes.CLUSTER_UNREACHABLE, 'x').code, ErrorCodes.TIMEOUT)
  })
})
