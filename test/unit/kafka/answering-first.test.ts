/**
 * Library clients ask the brokers that lately answered first (answering-first.ts): the pool the library reads
 * metadata through is still where it was (a library upgrade that moves it fails here), and its lookups of any
 * broker get the suspects last.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { Admin, Producer, TimeoutError, type Broker, type Connection } from '@platformatic/kafka'
import { metadataPool, watchedLibraryClient } from '../../../src/kafka/answering-first.ts'
import { clearSuspects, noteOutcome } from '../../../src/kafka/broker-suspects.ts'
import { clearSilences } from '../../../src/kafka/silent-brokers.ts'

const wedged = { host: '127.0.0.1', port: 9001 }
const fine = { host: '127.0.0.1', port: 9002 }

describe('library clients ask answering brokers first', () => {
  afterEach(() => { clearSilences(); clearSuspects() })

  it('finds the pool the library reads metadata through, in the admin and the producer', async () => {
    const admin = new Admin({ clientId: 't', bootstrapBrokers: ['127.0.0.1:9001'] })
    const producer = new Producer({ clientId: 't', bootstrapBrokers: ['127.0.0.1:9001'] })
    try {
      assert.notEqual(metadataPool(admin), null)
      assert.notEqual(metadataPool(producer), null)
    } finally {
      await admin.close()
      await producer.close()
    }
  })

  it('hands the pool its brokers with the suspects last', async () => {
    const admin = new Admin({ clientId: 't', bootstrapBrokers: ['127.0.0.1:9001', '127.0.0.1:9002'] })
    try {
      // The pool's own lookup records what it is handed (no network in unit tests), then the client is wrapped
      const pool = metadataPool(admin)!
      const asked: Broker[][] = []
      pool.getFirstAvailable = (async (brokers: Broker[]): Promise<Connection> => {
        asked.push(brokers)
        throw new Error('no network in unit tests')
      }) as typeof pool.getFirstAvailable
      watchedLibraryClient(admin, 'cluster B')
      // When a broker lately timed out
      noteOutcome(wedged, new TimeoutError('Connection to 127.0.0.1:9001 timed out.'))
      await pool.getFirstAvailable([wedged, fine]).catch(() => undefined)
      // Then it is asked last
      assert.deepEqual(asked, [[fine, wedged]])
    } finally {
      await admin.close()
    }
  })
})
