/**
 * The requests of the protocol golden tests: scripts/capture-protocol.ts sends them to a real broker and records
 * the bytes both ways in test/fixtures/protocol/<broker>.json; test/unit/kafka/protocol/golden.test.ts encodes
 * them again (the bytes must match what the broker accepted) and decodes the broker's answers.
 *
 * Requests are deterministic: fixed record batch bytes (no producer id: the broker does not check sequences),
 * so that the same scenario encodes to the same bytes on every run.
 */
import type { ApiSpec } from '../../src/kafka/protocol/api.ts'
import { ApiVersionsApi } from '../../src/kafka/protocol/api-versions.ts'
import { FetchApi, type FetchRequest } from '../../src/kafka/protocol/fetch.ts'
import { InitProducerIdApi, type InitProducerIdRequest } from '../../src/kafka/protocol/init-producer-id.ts'
import { ListOffsetsApi, ListOffsetTimestamps, type ListOffsetsRequest } from '../../src/kafka/protocol/list-offsets.ts'
import { MetadataApi, type MetadataRequest } from '../../src/kafka/protocol/metadata.ts'
import { ProduceApi, type ProduceRequest } from '../../src/kafka/protocol/produce.ts'
import { encodeSourceBatch } from '../fakes/source-batches.ts'
import { coordinationScenarios, type GoldenContext } from './protocol-coordination-scenarios.ts'

export type { GoldenContext } from './protocol-coordination-scenarios.ts'

/** 2026-12-01T00:00:00Z: fixed, so the batch bytes are too. */
const TIMESTAMP = 1_796_083_200_000n

/** Three records: a plain one, a null key with a header, an empty value. */
export function goldenBatch (): Buffer {
  return encodeSourceBatch({
    records: [
      { offset: 0, timestamp: TIMESTAMP, key: Buffer.from('k0'), value: Buffer.from('v0'), headers: [] },
      { offset: 1, timestamp: TIMESTAMP + 1n, key: null, value: Buffer.from('v1'), headers: [[Buffer.from('h'), Buffer.from('x')]] },
      { offset: 2, timestamp: TIMESTAMP + 2n, key: Buffer.from('k2'), value: Buffer.alloc(0), headers: [] }
    ],
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    partitionLeaderEpoch: -1
  })
}

export interface Scenario<Req> {
  /** The API's name, or e.g. `FindCoordinator(group)` where one API is captured with several requests. */
  readonly name: string
  readonly spec: ApiSpec<Req, unknown>
  readonly request: Req
}

/** The topic every scenario uses (one partition), named and, where the broker has ids, identified. */
export interface GoldenTopic {
  readonly name: string
  readonly id: string | null
}

/**
 * In the order the capture sends them: metadata first (it tells the topic id), then a produce per version (each
 * appends 3 records), list offsets, fetch from offset 0 (read_committed), a producer id.
 */
export function scenarios (topic: GoldenTopic): Scenario<unknown>[] {
  const metadata: MetadataRequest = { topics: [topic.name] }
  const produce: ProduceRequest = { acks: -1, timeoutMs: 30_000, topics: [{ name: topic.name, partitions: [{ index: 0, batch: goldenBatch() }] }] }
  const listOffsets: ListOffsetsRequest = { isolationLevel: 1, topics: [{ name: topic.name, partitions: [{ partition: 0, timestamp: ListOffsetTimestamps.LATEST }] }] }
  const fetch: FetchRequest = {
    maxWaitMs: 0, minBytes: 0, maxBytes: 1_048_576, isolationLevel: 1,
    topics: [{ name: topic.name, id: topic.id, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1_048_576 }] }]
  }
  const initProducerId: InitProducerIdRequest = { transactionalId: null, transactionTimeoutMs: 60_000 }
  return [
    { name: ApiVersionsApi.name, spec: ApiVersionsApi, request: { clientSoftwareName: 'kmirror', clientSoftwareVersion: '0.1.0' } },
    { name: MetadataApi.name, spec: MetadataApi, request: metadata },
    { name: ProduceApi.name, spec: ProduceApi, request: produce },
    { name: ListOffsetsApi.name, spec: ListOffsetsApi, request: listOffsets },
    { name: FetchApi.name, spec: FetchApi, request: fetch },
    { name: InitProducerIdApi.name, spec: InitProducerIdApi, request: initProducerId }
  ] as Scenario<unknown>[]
}

/** The scenario NAME of an exchange, data path or coordination, with the context it was captured in. */
export function scenarioFor (topic: GoldenTopic, name: string, context: GoldenContext = {}): Scenario<unknown> | undefined {
  return [...scenarios(topic), ...coordinationScenarios(topic, context)].find(s => s.name === name)
}

/** JSON of a decoded response: bigints as strings, buffers as hex, maps as arrays of entries. */
export function toJson (value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString()
  if (Buffer.isBuffer(value)) return { hex: value.toString('hex') }
  if (value instanceof Map) return [...value].map(([k, v]) => [toJson(k), toJson(v)])
  if (Array.isArray(value)) return value.map(toJson)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]))
  return value
}
