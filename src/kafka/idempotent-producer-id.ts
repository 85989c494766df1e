/**
 * The producer id of the data path's idempotent producer (InitProducerId without a transactional id), asked of any
 * broker of the target; the transactional one comes from the transaction coordinator (transactions.ts).
 *
 * Invariants:
 * - A fresh cluster answers COORDINATOR_LOAD_IN_PROGRESS for a moment: retriable answers are asked again, briefly
 *   (up to 20 attempts, at most 500 ms apart), so the first record does not pay the replication loop's back-off.
 * - Anything else throws a PRODUCE KmirrorError naming the cluster and the client id.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Broker } from '@platformatic/kafka'
import { ErrorCodes } from '../errors.ts'
import type { WriterTransport } from './broker-produce.ts'
import { askAnyBroker } from './broker-suspects.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaResponseError, toKmirrorError } from './errors.ts'
import { InitProducerIdApi } from './protocol/init-producer-id.ts'
import type { ProducerIdentity } from './record-batch.ts'

export async function initIdempotentProducer (transport: WriterTransport, brokers: Map<number, Broker>, cluster: ClusterContext, clientId: string): Promise<ProducerIdentity> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await askAnyBroker(transport.pool, [...brokers.values()], async connection =>
        await transport.send(connection, InitProducerIdApi, { transactionalId: null, transactionTimeoutMs: 60_000 }, cluster.label))
      if (response.errorCode !== 0) throw kafkaResponseError(response.errorCode, ErrorCodes.PRODUCE, `get an idempotent producer id from ${cluster.label}`, cluster)
      return { id: response.producerId, epoch: response.producerEpoch }
    } catch (err) {
      const wrapped = toKmirrorError(err, ErrorCodes.PRODUCE, `get an idempotent producer id from ${cluster.label} (${clientId})`, cluster)
      if (!wrapped.retriable || attempt >= 20) throw wrapped
      await delay(Math.min(500, 10 * attempt))
    }
  }
}
