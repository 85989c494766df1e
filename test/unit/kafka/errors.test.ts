import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../src/errors.ts'
import { kafkaResponseError } from '../../../src/kafka/errors.ts'

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
