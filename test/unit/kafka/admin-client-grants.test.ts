import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { Admin } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { AdminClient } from '../../../src/kafka/admin-client.ts'
import { clusterContext } from '../../../src/kafka/connection-hints.ts'

/** A refusal as the library raises it: the Kafka error name is the `apiId` of an error in the tree. */
function refusal (name: string): Error {
  return Object.assign(new Error(`Received response with error while executing API: ${name}`), { apiId: name })
}

type Patched = 'createPartitions' | 'deleteTopics' | 'incrementalAlterConfigs'

/** Library Admin methods replaced for one test; the client never connects (nothing listens on port 1). */
const patched = new Map<Patched, unknown>()

function refuseWith (method: Patched, name: string): void {
  const prototype = Admin.prototype as unknown as Record<Patched, unknown>
  if (!patched.has(method)) patched.set(method, prototype[method])
  prototype[method] = async () => { throw refusal(name) }
}

async function refusedBy (call: (admin: AdminClient) => Promise<unknown>): Promise<KmirrorError> {
  const props = { 'bootstrap.servers': '127.0.0.1:1', 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="x";' }
  const admin = new AdminClient(props, 'grants-test', clusterContext('B', props))
  try {
    await call(admin)
  } catch (err) {
    assert.ok(err instanceof KmirrorError)
    return err
  } finally {
    await admin.close()
  }
  assert.fail('the call was not refused')
}

describe('AdminClient: a refused topic change names the ACL to grant', () => {
  afterEach(() => {
    const prototype = Admin.prototype as unknown as Record<Patched, unknown>
    for (const [method, original] of patched) prototype[method] = original
    patched.clear()
  })

  it('names ALTER on the topic when growing it is refused', async () => {
    // Given the target refuses CreatePartitions
    refuseWith('createPartitions', 'TOPIC_AUTHORIZATION_FAILED')
    // When a remote topic is grown
    const err = await refusedBy(admin => admin.createPartitions('A.orders', 6))
    // Then the error names the grant, its principal and its kafka-acls.sh line
    assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
    assert.match(err.message, /^growing topic A\.orders to 6 partitions on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant ALTER on topic A\.orders to User:bob on cluster B \(kafka-acls\.sh .*--operation Alter --topic A\.orders;/)
  })

  it('names DELETE on the topics when deleting them is refused', async () => {
    refuseWith('deleteTopics', 'TOPIC_AUTHORIZATION_FAILED')
    const err = await refusedBy(admin => admin.deleteTopics(['A.gone']))
    assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
    assert.match(err.message, /^deleting topic A\.gone on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant DELETE on topic A\.gone to User:bob on cluster B \(kafka-acls\.sh .*--operation Delete --topic A\.gone;/)
  })

  it('names ALTER_CONFIGS on the topic when changing its configs is refused', async () => {
    refuseWith('incrementalAlterConfigs', 'TOPIC_AUTHORIZATION_FAILED')
    const err = await refusedBy(admin => admin.alterTopicConfigs('A.orders', [{ op: 'set', name: 'retention.ms', value: '1000' }]))
    assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
    assert.match(err.message, /^changing the configs of topic A\.orders on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant ALTER_CONFIGS on topic A\.orders to User:bob on cluster B \(kafka-acls\.sh .*--operation AlterConfigs --topic A\.orders;/)
  })

  it('leaves an error that is no refusal as it was, without a grant', async () => {
    refuseWith('createPartitions', 'INVALID_PARTITIONS')
    const err = await refusedBy(admin => admin.createPartitions('A.orders', 2))
    assert.notEqual(err.code, ErrorCodes.NOT_AUTHORIZED)
    assert.doesNotMatch(err.message, /grant/)
    assert.match(err.message, /INVALID_PARTITIONS/)
  })
})
