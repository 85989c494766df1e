/**
 * FindCoordinator (key 10), v2-v4: which broker coordinates a group (key type GROUP) or a transactional id
 * (TRANSACTION).
 *
 * Version notes (Kafka's FindCoordinatorRequest/Response.json): v1 adds the key type, v2 is v1 again (Kafka 2.1);
 * v3 is flexible; v4 (KIP-699) sends a list of keys and answers a list of coordinators, each with its own error.
 * Before v4 the request carries exactly one key and the answer names no key: it is the one asked.
 */
import type { ApiSpec } from './api.ts'

export const CoordinatorKeyTypes = { GROUP: 0, TRANSACTION: 1 } as const
export type CoordinatorKeyType = (typeof CoordinatorKeyTypes)[keyof typeof CoordinatorKeyTypes]

/** The version from which one request may carry several keys. */
export const FIND_COORDINATOR_BATCHED_FROM = 4

export interface FindCoordinatorRequest {
  readonly keyType: CoordinatorKeyType
  /** Exactly one key below v4. */
  readonly keys: readonly string[]
}

export interface Coordinator {
  /** The key asked; null before v4 (the answer is for the one key of the request). */
  readonly key: string | null
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly nodeId: number
  readonly host: string
  readonly port: number
}

export interface FindCoordinatorResponse {
  readonly throttleTimeMs: number
  readonly coordinators: readonly Coordinator[]
}

export const FindCoordinatorApi: ApiSpec<FindCoordinatorRequest, FindCoordinatorResponse> = {
  key: 10,
  name: 'FindCoordinator',
  minVersion: 2,
  maxVersion: 4,
  flexibleFrom: 3,
  encode (w, version, request) {
    if (version < FIND_COORDINATOR_BATCHED_FROM) {
      if (request.keys.length !== 1) throw new RangeError(`FindCoordinator v${version} carries exactly one key, not ${request.keys.length}`)
      w.string(request.keys[0]!).int8(request.keyType)
    } else {
      // An array of strings: no tagged-field section per element (v4 is always flexible: compact length).
      w.int8(request.keyType).uvarint(request.keys.length + 1)
      for (const key of request.keys) w.string(key)
    }
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    let coordinators: Coordinator[]
    if (version < FIND_COORDINATOR_BATCHED_FROM) {
      const errorCode = r.int16()
      const errorMessage = r.nullableString()
      coordinators = [{ key: null, errorCode, errorMessage, nodeId: r.int32(), host: r.string(), port: r.int32() }]
    } else {
      coordinators = r.structs(r => {
        const key = r.string()
        const nodeId = r.int32()
        const host = r.string()
        const port = r.int32()
        return { key, nodeId, host, port, errorCode: r.int16(), errorMessage: r.nullableString() }
      })
    }
    r.tags()
    return { throttleTimeMs, coordinators }
  }
}
