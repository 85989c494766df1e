/**
 * The group and transaction part of scripts/capture-protocol.ts: a member's life and a transactional producer's,
 * every version both kmirror and the broker speak recorded once with the context (member id, generation, producer
 * id and epoch) its request was built from. Steps a version does not record are still sent (at the highest
 * version) to reach the state the recorded one needs: a member to sync, a transaction to end.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { ApiSpec } from '../src/kafka/protocol/api.ts'
import type { AddPartitionsToTxnResponse } from '../src/kafka/protocol/add-partitions-to-txn.ts'
import type { FindCoordinatorResponse } from '../src/kafka/protocol/find-coordinator.ts'
import type { InitProducerIdResponse } from '../src/kafka/protocol/init-producer-id.ts'
import type { JoinGroupResponse } from '../src/kafka/protocol/join-group.ts'
import type { BrokerApis } from '../src/kafka/protocol/negotiation.ts'
import {
  FIND_GROUP_COORDINATOR, FIND_TRANSACTION_COORDINATOR, INIT_TRANSACTIONAL_ID, coordinationScenarios, type GoldenContext
} from '../test/helpers/protocol-coordination-scenarios.ts'
import type { GoldenTopic } from '../test/helpers/protocol-scenarios.ts'

/** Sends one request at a version and returns the request bytes and the raw response (capture-protocol.ts). */
export type Exchanger = (spec: ApiSpec<unknown, unknown>, version: number, request: unknown) => Promise<{ requestHex: string, response: Buffer }>

export interface CoordinationExchange {
  api: string
  version: number
  context: GoldenContext
  requestHex: string
  responseHex: string
  decoded: unknown
}

/** Errors worth waiting out: the coordinator loading, not there yet, or a transaction still completing. */
const TRANSIENT = new Set([14, 15, 16, 51])
const MEMBER_ID_REQUIRED = 79

interface Capture {
  readonly topic: GoldenTopic
  readonly apis: BrokerApis
  readonly send: Exchanger
  readonly decode: (spec: ApiSpec<unknown, unknown>, version: number, response: Buffer) => unknown
  readonly out: CoordinationExchange[]
}

function firstError (decoded: unknown): number {
  const d = decoded as { errorCode?: number, coordinators?: { errorCode: number }[], results?: AddPartitionsToTxnResponse['results'], transactions?: { errorCode?: number }[] }
  return d.errorCode ?? d.coordinators?.[0]?.errorCode ?? d.results?.[0]?.partitions[0]?.errorCode ?? d.transactions?.[0]?.errorCode ?? 0
}

/** The versions of scenario NAME both sides speak, lowest first (empty when none). */
function versions (c: Capture, name: string): number[] {
  const spec = coordinationScenarios(c.topic, {}).find(s => s.name === name)!.spec
  const range = c.apis.apis.get(spec.key)
  const out: number[] = []
  for (let v = Math.max(spec.minVersion, range?.min ?? Infinity); v <= Math.min(spec.maxVersion, range?.max ?? -1); v++) out.push(v)
  return out
}

/** Sends scenario NAME at VERSION (the highest when null), retrying transient errors for up to 60 s. */
async function call<T> (c: Capture, name: string, version: number | null, context: GoldenContext, record: boolean): Promise<T> {
  const scenario = coordinationScenarios(c.topic, context).find(s => s.name === name)!
  const at = version ?? versions(c, name).at(-1)
  if (at === undefined) throw new Error(`the broker speaks no version of ${name} that kmirror does`)
  const deadline = Date.now() + 60_000
  for (;;) {
    const { requestHex, response } = await c.send(scenario.spec, at, scenario.request)
    const decoded = c.decode(scenario.spec, at, response)
    if (TRANSIENT.has(firstError(decoded)) && Date.now() < deadline) { await delay(200); continue }
    if (record) {
      c.out.push({ api: name, version: at, context, requestHex, responseHex: response.toString('hex'), decoded })
      process.stdout.write(`${name} v${at}: ${response.length} bytes\n`)
    }
    return decoded as T
  }
}

/** A member of GROUP (joined at the highest version, twice where the broker wants a member id first). */
async function joinedMember (c: Capture, group: string | undefined, record: number | null): Promise<GoldenContext> {
  const first = await call<JoinGroupResponse>(c, 'JoinGroup', record, { group, memberId: '' }, record !== null)
  const joined = first.errorCode === MEMBER_ID_REQUIRED
    ? await call<JoinGroupResponse>(c, 'JoinGroup', record, { group, memberId: first.memberId }, record !== null)
    : first
  if (joined.errorCode !== 0) throw new Error(`JoinGroup of ${group ?? 'the golden group'} failed with error ${joined.errorCode}`)
  return { group, memberId: joined.memberId, generationId: joined.generationId }
}

async function captureGroup (c: Capture): Promise<void> {
  await call<FindCoordinatorResponse>(c, FIND_GROUP_COORDINATOR, null, {}, false)
  for (const v of versions(c, FIND_GROUP_COORDINATOR)) await call(c, FIND_GROUP_COORDINATOR, v, {}, true)
  for (const v of versions(c, 'JoinGroup')) {
    const member = await joinedMember(c, `${c.topic.name}-join-v${v}`, v)
    await call(c, 'LeaveGroup', null, member, false)
  }
  let member = await joinedMember(c, undefined, null)
  for (const v of versions(c, 'SyncGroup')) await call(c, 'SyncGroup', v, member, true)
  for (const v of versions(c, 'Heartbeat')) await call(c, 'Heartbeat', v, member, true)
  for (const v of versions(c, 'DescribeGroups')) await call(c, 'DescribeGroups', v, {}, true)
  for (const [i, v] of versions(c, 'LeaveGroup').entries()) {
    if (i > 0) {
      member = await joinedMember(c, undefined, null)
      await call(c, 'SyncGroup', null, member, false)
    }
    await call(c, 'LeaveGroup', v, member, true)
  }
}

async function captureTransactions (c: Capture): Promise<void> {
  await call<FindCoordinatorResponse>(c, FIND_TRANSACTION_COORDINATOR, null, {}, false)
  for (const v of versions(c, FIND_TRANSACTION_COORDINATOR)) await call(c, FIND_TRANSACTION_COORDINATOR, v, {}, true)
  let producer: InitProducerIdResponse | undefined
  for (const v of versions(c, INIT_TRANSACTIONAL_ID)) producer = await call<InitProducerIdResponse>(c, INIT_TRANSACTIONAL_ID, v, {}, true)
  if (producer === undefined || producer.errorCode !== 0) throw new Error(`InitProducerId with a transactional id failed: ${JSON.stringify(producer)}`)
  const context: GoldenContext = { producerId: producer.producerId.toString(), producerEpoch: producer.producerEpoch }
  for (const v of versions(c, 'AddPartitionsToTxn')) {
    await call(c, 'AddPartitionsToTxn', v, context, true)
    await call(c, 'EndTxn', null, context, false)
  }
  for (const v of versions(c, 'EndTxn')) {
    await call(c, 'AddPartitionsToTxn', null, context, false)
    await call(c, 'EndTxn', v, context, true)
  }
  // The transaction listed and described while open (brokers before 3.0 speak neither: nothing recorded)
  if (versions(c, 'ListTransactions').length + versions(c, 'DescribeTransactions').length > 0) {
    await call(c, 'AddPartitionsToTxn', null, context, false)
    for (const v of versions(c, 'ListTransactions')) await call(c, 'ListTransactions', v, context, true)
    for (const v of versions(c, 'DescribeTransactions')) await call(c, 'DescribeTransactions', v, context, true)
    await call(c, 'EndTxn', null, context, false)
  }
}

export async function captureCoordination (topic: GoldenTopic, apis: BrokerApis, send: Exchanger,
  decode: Capture['decode']): Promise<CoordinationExchange[]> {
  const capture: Capture = { topic, apis, send, decode, out: [] }
  await captureGroup(capture)
  await captureTransactions(capture)
  return capture.out
}
