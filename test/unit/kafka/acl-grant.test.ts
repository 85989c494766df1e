import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { describeGrant, withGrant } from '../../../src/kafka/acl-grant.ts'

const B = { alias: 'B', brokers: 'b1:9092,b2:9092', protocol: 'PLAINTEXT' }

describe('the grant a refused request needs', () => {
  it('names operation, resource, principal and cluster, with the kafka-acls.sh line that reaches the cluster', () => {
    assert.equal(describeGrant({ operation: 'WRITE', resourceType: 'topic', names: ['A.checkpoints.internal'] }, 'User:bob', B),
      'grant WRITE on topic A.checkpoints.internal to User:bob on cluster B (kafka-acls.sh --bootstrap-server b1:9092,b2:9092 --add --allow-principal User:bob ' +
      '--operation Write --topic A.checkpoints.internal; see "Least-privilege ACLs" in docs/operations.md)')
    assert.match(describeGrant({ operation: 'DESCRIBE_CONFIGS', resourceType: 'cluster', names: ['kafka-cluster'] }, 'the principal kmirror authenticates as on cluster A', { alias: 'A', brokers: 'a:9093', protocol: 'SASL_SSL' }),
      /\(kafka-acls\.sh --bootstrap-server a:9093 --command-config ADMIN_PROPERTIES_FILE_OF_A --add --allow-principal PRINCIPAL_OF_A --operation DescribeConfigs --cluster;/)
  })

  it('names a prefixed grant as one, with the pattern type on the kafka-acls.sh line', () => {
    assert.equal(describeGrant({ operation: 'DESCRIBE', resourceType: 'group', names: ['kmirror-A-B-'], prefixed: true }, 'User:bob', B),
      'grant DESCRIBE on groups prefixed kmirror-A-B- to User:bob on cluster B (kafka-acls.sh --bootstrap-server b1:9092,b2:9092 --add --allow-principal User:bob ' +
      '--operation Describe --group kmirror-A-B- --resource-pattern-type prefixed; see "Least-privilege ACLs" in docs/operations.md)')
  })

  it('turns an authorization refusal into that grant, keeping code, cause and retriability; other errors pass unchanged', () => {
    const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'write 2 record(s) to cluster B: ... [TOPIC_AUTHORIZATION_FAILED]', { retriable: true, details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })
    const explained = withGrant(refused, 'writing to A.checkpoints.internal on cluster B', { operation: 'WRITE', resourceType: 'topic', names: ['A.checkpoints.internal'] }, 'User:bob', B)
    assert.match(explained.message, /^writing to A\.checkpoints\.internal on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant WRITE on topic A\.checkpoints\.internal to User:bob on cluster B \(kafka-acls\.sh --bootstrap-server b1:9092,b2:9092 --add/)
    assert.equal(explained.code, ErrorCodes.NOT_AUTHORIZED)
    assert.equal(explained.cause, refused)
    assert.equal(explained.retriable, true)
    const other = new KmirrorError(ErrorCodes.PRODUCE, 'timeout')
    assert.equal(withGrant(other, 'x', { operation: 'WRITE', resourceType: 'topic', names: ['t'] }, 'User:bob', B), other)
  })
})
