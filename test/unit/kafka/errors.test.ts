import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../src/errors.ts'
import { TimeoutError } from '@platformatic/kafka'
import { coordinatorError, CoordinatorErrors, isCoordinatorRetriable, isRetriableKafkaError, isTransactionError, kafkaErrorHint, kafkaErrorInfo, kafkaResponseError, membershipError, MembershipErrors, toKmirrorError } from '../../../src/kafka/errors.ts'

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

describe('coordinator and membership errors (the one table)', () => {
  it('Given the answers of a coordinator starting or moved, then each is classified by code and by name alike', () => {
    // 14 COORDINATOR_LOAD_IN_PROGRESS, 15 COORDINATOR_NOT_AVAILABLE, 16 NOT_COORDINATOR
    assert.deepEqual([14, 15, 16].map(code => coordinatorError(code)), [CoordinatorErrors.LOADING, CoordinatorErrors.MOVED, CoordinatorErrors.MOVED])
    assert.deepEqual(['COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR'].map(isCoordinatorRetriable), [true, true, true])
    // A broker that is no longer the transaction coordinator of the id (a newer coordinator epoch): found again, not waited on
    assert.equal(coordinatorError('TRANSACTION_COORDINATOR_FENCED'), CoordinatorErrors.MOVED)
  })

  it('Given a transaction coordinator completing an earlier transaction, then it is busy: waited out by transactions, not a group coordinator starting', () => {
    assert.equal(coordinatorError('CONCURRENT_TRANSACTIONS'), CoordinatorErrors.BUSY)
    assert.equal(isCoordinatorRetriable('CONCURRENT_TRANSACTIONS'), false)
  })

  it('Given errors about the request rather than the coordinator, then they say nothing about it', () => {
    for (const name of ['NOT_LEADER_OR_FOLLOWER', 'GROUP_AUTHORIZATION_FAILED', 'UNKNOWN_MEMBER_ID', 'PRODUCER_FENCED', 'NO_SUCH_ERROR']) {
      assert.equal(coordinatorError(name), undefined, name)
      assert.equal(isCoordinatorRetriable(name), false, name)
    }
    assert.equal(coordinatorError(0), undefined, 'no error')
  })

  it('Given a group coordinator\'s answers about the member, then rebalancing, gone and id-required are told apart', () => {
    // 27 REBALANCE_IN_PROGRESS, 25 UNKNOWN_MEMBER_ID, 22 ILLEGAL_GENERATION, 82 FENCED_INSTANCE_ID, 79 MEMBER_ID_REQUIRED
    assert.deepEqual([27, 25, 22, 82, 79, 16, 0].map(code => membershipError(code)),
      [MembershipErrors.REBALANCING, MembershipErrors.GONE, MembershipErrors.GONE, MembershipErrors.GONE, MembershipErrors.ID_REQUIRED, undefined, undefined])
  })

  it('Given produce answers about the transaction rather than the partition, then only those end the round\'s transaction', () => {
    assert.deepEqual(['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'INVALID_TXN_STATE', 'INVALID_PRODUCER_ID_MAPPING', 'TRANSACTION_ABORTABLE'].map(isTransactionError), [true, true, true, true])
    // Fencing is told apart by its own names (writer-transaction.ts), partition answers are not about the transaction.
    assert.deepEqual(['PRODUCER_FENCED', 'NOT_LEADER_OR_FOLLOWER', 'TOPIC_AUTHORIZATION_FAILED', 'NO_SUCH_ERROR'].map(isTransactionError), [false, false, false, false])
  })
})

describe('group and version errors (the one table)', () => {
  it('Given a group that does not exist on the cluster, then it is not retried and the hint says to check the group name and its committed offsets there', () => {
    // 69 = GROUP_ID_NOT_FOUND
    assert.equal(isRetriableKafkaError(69), false)
    assert.equal(kafkaErrorInfo('GROUP_ID_NOT_FOUND').retriable, false)
    assert.equal(kafkaErrorHint('GROUP_ID_NOT_FOUND'), 'the group does not exist on this cluster: check the group name, and that the group has committed offsets on this cluster')
  })

  it('Given an empty or invalid group id, then it is not retried and the hint names the group id given, the flow\'s group.id among them', () => {
    // 24 = INVALID_GROUP_ID
    assert.equal(isRetriableKafkaError(24), false)
    assert.equal(kafkaErrorInfo('INVALID_GROUP_ID').retriable, false)
    assert.match(kafkaErrorHint('INVALID_GROUP_ID') ?? '', /^the group id is empty or invalid: check the group id given \(the flow's group\.id, `A->B\.group\.id`/)
  })

  it('Given a broker without the request version or feature, then it is not retried and the hint says to upgrade the brokers or turn the feature on, citing the compatibility doc', () => {
    // 35 = UNSUPPORTED_VERSION
    assert.equal(isRetriableKafkaError(35), false)
    assert.equal(kafkaErrorInfo('UNSUPPORTED_VERSION').retriable, false)
    assert.equal(kafkaErrorHint('UNSUPPORTED_VERSION'), 'the broker does not support this request version or feature: its Kafka release is too old for it, ' +
      'or the feature is turned off on the broker; upgrade the brokers or turn the feature on (docs/compatibility.md)')
  })

  it('Given a partition without a leader, then the hint names the kafka-topics.sh line that lists such partitions on that cluster', () => {
    assert.match(kafkaErrorHint('LEADER_NOT_AVAILABLE', { alias: 'A', brokers: 'h1:9092,h2:9092', protocol: 'PLAINTEXT' }) ?? '',
      /\(to list such partitions: kafka-topics\.sh --bootstrap-server h1:9092,h2:9092 --describe --unavailable-partitions\)$/)
    assert.match(kafkaErrorHint('LEADER_NOT_AVAILABLE', { alias: 'A', brokers: 'h:9093', protocol: 'SSL' }) ?? '',
      /\(to list such partitions: kafka-topics\.sh --bootstrap-server h:9093 --command-config CLIENT_PROPERTIES_FILE_OF_A --describe/)
    assert.match(kafkaErrorHint('LEADER_NOT_AVAILABLE') ?? '', /\(to list such partitions: kafka-topics\.sh --bootstrap-server BOOTSTRAP_SERVERS --describe/)
  })

  it('Given one of them in a response, then the error carries its hint and is not retriable', () => {
    const err = kafkaResponseError(69, ErrorCodes.FETCH, 'read offsets of group g on cluster East', { alias: 'East' })
    assert.equal(err.retriable, false)
    assert.equal(err.message, 'read offsets of group g on cluster East: Kafka error GROUP_ID_NOT_FOUND; the group does not exist on this cluster: check the group name, and that the group has committed offsets on this cluster')
  })
})
