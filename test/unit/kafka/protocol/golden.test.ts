/**
 * Golden bytes from real brokers (test/fixtures/protocol/kafka-<release>.json, written by
 * scripts/capture-protocol.ts): for every version of every API kmirror sends itself, the request it encodes
 * today is byte for byte the one that broker accepted, and the broker's answer decodes, to its last byte, to the
 * values recorded when it was captured. Broker-independent facts are checked too (offsets, record counts).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { decodeResponse, encodeRequest } from '../../../../src/kafka/protocol/api.ts'
import type { ApiVersionsResponse } from '../../../../src/kafka/protocol/api-versions.ts'
import { FetchApi, type FetchResponse } from '../../../../src/kafka/protocol/fetch.ts'
import { MetadataApi } from '../../../../src/kafka/protocol/metadata.ts'
import { BrokerApis } from '../../../../src/kafka/protocol/negotiation.ts'
import type { ListOffsetsResponse } from '../../../../src/kafka/protocol/list-offsets.ts'
import { ProduceApi, type ProduceResponse } from '../../../../src/kafka/protocol/produce.ts'
import { decodeRecords, scanBatches, type FetchedRecord } from '../../../../src/kafka/record-batch.ts'
import { REPO_ROOT } from '../../../helpers/clusters.ts'
import { scenarioFor, toJson, type GoldenContext, type GoldenTopic } from '../../../helpers/protocol-scenarios.ts'

interface Fixture {
  broker: string
  release: string
  topic: GoldenTopic
  exchanges: { api: string, version: number, context?: GoldenContext, requestHex: string, responseHex: string, decoded: unknown }[]
}

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'protocol')
const fixtures: Fixture[] = readdirSync(DIR).filter(f => f.endsWith('.json')).sort().map(f => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Fixture)

test('there are golden captures of at least a current broker', () => {
  assert.ok(fixtures.some(f => f.broker.startsWith('4.')), fixtures.map(f => f.broker).join(', '))
})

for (const fixture of fixtures) {
  describe(`Kafka ${fixture.broker}`, () => {
    const decoded = (api: string): { version: number, response: unknown }[] => fixture.exchanges
      .filter(e => e.api === api)
      .map(e => ({ version: e.version, response: decodeResponse(scenarioFor(fixture.topic, api)!.spec, e.version, Buffer.from(e.responseHex, 'hex')) }))

    for (const exchange of fixture.exchanges) {
      test(`${exchange.api} v${exchange.version}: the request is byte for byte what the broker accepted, the answer decodes to what it said`, () => {
        // Group and transaction requests carry what the broker handed out before (member id, producer id): the context.
        const scenario = scenarioFor(fixture.topic, exchange.api, exchange.context)
        assert.ok(scenario !== undefined, `no scenario for ${exchange.api}`)
        const request = Buffer.concat(encodeRequest(scenario.spec, exchange.version, scenario.request))
        assert.equal(request.toString('hex'), exchange.requestHex)
        const response = decodeResponse(scenario.spec, exchange.version, Buffer.from(exchange.responseHex, 'hex'))
        assert.deepEqual(toJson(response), exchange.decoded)
      })
    }

    const listed = (): ApiVersionsResponse => {
      const found = decoded('ApiVersions').map(d => d.response as ApiVersionsResponse).find(r => r.errorCode === 0)
      assert.ok(found !== undefined, 'no successful ApiVersions answer')
      return found
    }
    if (fixture.release === 'Kafka 2.0 or older') {
      test('the broker is below kmirror\'s floor: negotiation finds no usable Fetch, Produce or Metadata version', () => {
        const apis = new BrokerApis(listed().apis, 'golden')
        for (const spec of [FetchApi, ProduceApi, MetadataApi]) assert.equal(apis.versionFor(spec), null, spec.name)
        assert.match(apis.incompatible(FetchApi, 'cluster old').message, /looks like Kafka 2\.0 or older\) offers Fetch v0-v8, kmirror needs v10-v17/)
      })
      return
    }

    test('every produce version appended its three records, and the offsets add up', () => {
      const produced = decoded('Produce').map(d => (d.response as ProduceResponse).responses[0]!.partitions[0]!)
      assert.ok(produced.length > 0)
      produced.forEach((p, i) => {
        assert.equal(p.errorCode, 0)
        assert.equal(p.baseOffset, BigInt(3 * i))
      })
      for (const { response } of decoded('ListOffsets')) {
        const p = (response as ListOffsetsResponse).topics[0]!.partitions[0]!
        assert.deepEqual([p.errorCode, p.offset], [0, BigInt(3 * produced.length)])
      }
    })

    test('every fetch version returns the produced records exactly', () => {
      const expected = decoded('Produce').flatMap((_, i) => [
        { offset: 3 * i, key: 'k0', value: 'v0', headers: [] },
        { offset: 3 * i + 1, key: null, value: 'v1', headers: [['h', 'x']] },
        { offset: 3 * i + 2, key: 'k2', value: '', headers: [] }
      ])
      for (const { version, response } of decoded('Fetch')) {
        const partition = (response as FetchResponse).responses[0]!.partitions[0]!
        assert.equal(partition.errorCode, 0, `v${version}`)
        const records: FetchedRecord[] = []
        for (const batch of scanBatches(partition.records!, fixture.topic.name, 0)) decodeRecords(batch, 0, records)
        assert.deepEqual(records.map(r => ({
          offset: r.offset,
          key: r.key?.toString() ?? null,
          value: r.value?.toString() ?? null,
          headers: r.headers.map(([k, v]) => [k.toString(), v?.toString() ?? null])
        })), expected, `v${version}`)
      }
    })

    test('the broker lists the versions kmirror negotiates', () => {
      const coordination = ['FindCoordinator(group)', 'FindCoordinator(transaction)', 'JoinGroup', 'SyncGroup', 'Heartbeat',
        'DescribeGroups', 'LeaveGroup', 'InitProducerId(transactional)', 'AddPartitionsToTxn', 'EndTxn']
      for (const api of ['Fetch', 'Produce', 'Metadata', 'ListOffsets', 'InitProducerId', ...coordination]) {
        const spec = scenarioFor(fixture.topic, api)!.spec
        const asked = fixture.exchanges.filter(e => e.api === api).map(e => e.version)
        assert.equal(Math.max(...asked), Math.min(spec.maxVersion, listed().apis.get(spec.key)!.max), api)
      }
    })
  })
}
