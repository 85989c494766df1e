/**
 * The plumbing under the Kafka test helpers: record and header types, and short-lived clients of a
 * test cluster that are always closed.
 */
import { Admin, Consumer, FetchIsolationLevels } from '@platformatic/kafka'
import { resolveCluster, TRIO, type ClusterRef } from './clusters.ts'
import { uniqueName } from './wait.ts'

/** A record header. Keys repeat freely and order matters, exactly as on the wire. */
export type Header = [key: Buffer, value: Buffer | null]

export interface TestRecord {
  topic: string
  partition: number
  key: Buffer | null
  value: Buffer | null
  headers: Header[]
  timestamp: bigint
}

/** A record as read back from a partition. */
export interface ReadRecord {
  offset: bigint
  key: Buffer | null
  value: Buffer | null
  headers: Header[]
  timestamp: bigint
}

export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
export type Isolation = 'read_committed' | 'read_uncommitted'

/** What helpers need of a node:test TestContext to clean up after themselves. */
export interface Cleanup {
  after (fn: () => unknown): void
}

/** Options for building a client of the test cluster by hand (clientId gets a unique suffix). */
export function clientOptions (ref: ClusterRef, clientIdPrefix = 'kmirror-test') {
  const cluster = resolveCluster(ref)
  return {
    clientId: uniqueName(clientIdPrefix),
    bootstrapBrokers: cluster.bootstrap.split(','),
    ...(cluster.sasl ? { sasl: { ...cluster.sasl } } : {}),
    // The trio is where tests kill nodes: its clients outlast a controller election and the fencing of the dead
    // broker (InitProducerId and Metadata fail meanwhile), about 10 s; elsewhere a failure shows within a second.
    retries: cluster.name === TRIO.name ? 40 : 5,
    retryDelay: 200
  }
}

export async function withAdmin<T> (ref: ClusterRef, use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin(clientOptions(ref, 'kmirror-test-admin'))
  try {
    return await use(admin)
  } finally {
    await admin.close()
  }
}

export async function withConsumer<T> (ref: ClusterRef, use: (consumer: Consumer) => Promise<T>): Promise<T> {
  // A group id is mandatory in the client, but nothing here joins or commits to a group.
  const consumer = new Consumer({ ...clientOptions(ref, 'kmirror-test-reader'), groupId: uniqueName('kmirror-test-unused') })
  try {
    return await use(consumer)
  } finally {
    await consumer.close(true)
  }
}

export function isolationLevel (isolation: Isolation): 0 | 1 {
  return isolation === 'read_committed' ? FetchIsolationLevels.READ_COMMITTED : FetchIsolationLevels.READ_UNCOMMITTED
}
