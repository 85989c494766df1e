import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCodes } from '../../../src/errors.ts'
import { GroupCoordinator } from '../../../src/kafka/group-coordinator.ts'

const coordinator = (): GroupCoordinator => new GroupCoordinator(
  { 'bootstrap.servers': '127.0.0.1:1', 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="mirror" password="secret";' },
  'kmirror|A->B|group', { label: 'cluster B', alias: 'B', brokers: '127.0.0.1:1', protocol: 'SASL_PLAINTEXT' }, 'kmirror-A-B', 60_000)

test('a group read refused names the grant: READ on the group, the principal and the cluster', async () => {
  const c = coordinator()
  const err = c.refusal(30, 'JoinGroup')
  assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
  assert.match(err.message, /^JoinGroup of group kmirror-A-B on cluster B was refused \(GROUP_AUTHORIZATION_FAILED\): grant READ on group kmirror-A-B to User:mirror on cluster B \(kafka-acls.sh --bootstrap-server 127.0.0.1:1 --command-config ADMIN_PROPERTIES_FILE_OF_B --add --allow-principal User:mirror --operation Read --group kmirror-A-B/)
  assert.doesNotMatch(err.message, /secret/)
  await c.close()
})

test('a session timeout the brokers refuse says which broker settings bound it', async () => {
  const c = coordinator()
  const err = c.refusal(26, 'JoinGroup')
  assert.equal(err.code, ErrorCodes.GROUP_MEMBERSHIP)
  assert.equal(err.retriable, false)
  assert.match(err.message, /INVALID_SESSION_TIMEOUT; .*group.min.session.timeout.ms and group.max.session.timeout.ms/)
  await c.close()
})
