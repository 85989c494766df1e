import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { RecordFetcher } from '../../../src/kafka/record-fetcher.ts'
import { readTopicToEnd } from '../../../src/kafka/topic-reader.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

/** A fetcher whose topics have one record in each partition and whose fetch fails with `err`. */
function refusingFetcher (err: Error, grantee?: RecordFetcher['grantee']): RecordFetcher {
  const fetcher = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : 1])),
    fetch: async () => { throw err },
    ...(grantee === undefined ? {} : { grantee })
  }
  return fetcher as unknown as RecordFetcher
}

const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'fetch of mm2-offsets.A.internal-0 from broker 1 (b:9092) of cluster B failed with Kafka error TOPIC_AUTHORIZATION_FAILED', { retriable: true, details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })

describe('readTopicToEnd', () => {
  it('names the READ grant on the topic, the principal and the cluster when the read is refused', async () => {
    const fetcher = refusingFetcher(refused, { principal: 'User:bob', cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' } })
    await assert.rejects(readTopicToEnd(fetcher, 'mm2-offsets.A.internal', 1, () => undefined), (err: KmirrorError) => {
      assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
      assert.match(err.message, /^reading mm2-offsets\.A\.internal on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant READ on topic mm2-offsets\.A\.internal to User:bob on cluster B \(kafka-acls\.sh --bootstrap-server b:9092 --add --allow-principal User:bob --operation Read --topic mm2-offsets\.A\.internal;/)
      assert.equal(err.cause, refused)
      return true
    })
  })

  it('leaves any other error as it is', async () => {
    const other = new KmirrorError(ErrorCodes.FETCH, 'fetch failed', { retriable: true })
    await assert.rejects(readTopicToEnd(refusingFetcher(other, { principal: 'User:bob', cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' } }), 't', 1, () => undefined), (err: unknown) => err === other)
  })
})
