/**
 * FindCoordinator (key 10), v1-v6: the broker that coordinates a consumer group (key type GROUP) or a
 * transactional id (key type TRANSACTION). One request shape for both: `findCoordinator(keyType, keys)`.
 *
 * Version notes (Kafka's FindCoordinatorRequest/FindCoordinatorResponse.json): v0 (no key type) was removed in
 * Kafka 4.0 and is not spoken (Kafka 2.1 offers v2); v1 adds the key type and the response's throttle time and
 * error message; v3 is flexible; v4 batches keys (KIP-699, Kafka 3.0): the request carries a key array and the
 * response one coordinator per key; v5 (KIP-890) and v6 (KIP-932 share groups) only add errors and key types.
 * Below v4 a request carries exactly one key: `findCoordinator` sends one request per key there.
 */
import type { Connection } from '@platformatic/kafka'
import type { ApiSpec } from './api.ts'
import { brokerApis, sendRequest } from './negotiation.ts'

export const CoordinatorKeyTypes = { GROUP: 0, TRANSACTION: 1 } as const
export type CoordinatorKeyType = (typeof CoordinatorKeyTypes)[keyof typeof CoordinatorKeyTypes]

export interface FindCoordinatorRequest {
  readonly keyType: CoordinatorKeyType
  /** Exactly one below v4. */
  readonly keys: readonly string[]
}

export interface Coordinator {
  /** The key asked for; below v4 the response does not echo it: `findCoordinator` fills it in. */
  readonly key: string
  readonly nodeId: number
  readonly host: string
  readonly port: number
  readonly errorCode: number
  readonly errorMessage: string | null
}

export interface FindCoordinatorResponse {
  readonly throttleTimeMs: number
  readonly coordinators: readonly Coordinator[]
}

/** The first version whose request carries several keys. */
const BATCHED_FROM = 4

export const FindCoordinatorApi: ApiSpec<FindCoordinatorRequest, FindCoordinatorResponse> = {
  key: 10,
  name: 'FindCoordinator',
  minVersion: 1,
  maxVersion: 6,
  flexibleFrom: 3,
  encode (w, version, request) {
    if (version >= BATCHED_FROM) {
      w.int8(request.keyType)
      // A compact array of strings (v4+ is flexible): no tagged fields per element, unlike structs.
      w.uvarint(request.keys.length + 1)
      for (const key of request.keys) w.string(key)
    } else {
      if (request.keys.length !== 1) throw new RangeError(`FindCoordinator v${version} carries exactly one key, not ${request.keys.length}`)
      w.string(request.keys[0]!).int8(request.keyType)
    }
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    if (version >= BATCHED_FROM) {
      const coordinators = r.structs((r): Coordinator =>
        ({ key: r.string(), nodeId: r.int32(), host: r.string(), port: r.int32(), errorCode: r.int16(), errorMessage: r.nullableString() }))
      r.tags()
      return { throttleTimeMs, coordinators }
    }
    const errorCode = r.int16()
    const errorMessage = r.nullableString()
    const coordinator = { key: '', nodeId: r.int32(), host: r.string(), port: r.int32(), errorCode, errorMessage }
    r.tags()
    return { throttleTimeMs, coordinators: [coordinator] }
  }
}

/** The coordinator of each key, asked of the broker behind `connection` (one request per key below v4). */
export async function findCoordinator (connection: Connection, keyType: CoordinatorKeyType, keys: readonly string[], cluster: string): Promise<Coordinator[]> {
  const apis = await brokerApis(connection)
  const version = apis.versionFor(FindCoordinatorApi)
  if (version !== null && version >= BATCHED_FROM) {
    return [...(await sendRequest(connection, FindCoordinatorApi, { keyType, keys }, cluster)).coordinators]
  }
  return await Promise.all(keys.map(async key => {
    const [found] = (await sendRequest(connection, FindCoordinatorApi, { keyType, keys: [key] }, cluster, BATCHED_FROM - 1)).coordinators
    return { ...found!, key }
  }))
}
