/**
 * Heartbeat (key 12), v2-v4: a member tells the coordinator it is alive in this generation; the answer says
 * whether a rebalance started (REBALANCE_IN_PROGRESS) or the member is no longer one (UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION).
 *
 * Version notes (Kafka's HeartbeatRequest/Response.json): v2 is Kafka 2.1; v3 adds group.instance.id (kmirror
 * sends null); v4 is flexible.
 */
import type { ApiSpec } from './api.ts'

export interface HeartbeatRequest {
  readonly groupId: string
  readonly generationId: number
  readonly memberId: string
}

export interface HeartbeatResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
}

export const HeartbeatApi: ApiSpec<HeartbeatRequest, HeartbeatResponse> = {
  key: 12,
  name: 'Heartbeat',
  minVersion: 2,
  maxVersion: 4,
  flexibleFrom: 4,
  encode (w, version, request) {
    w.string(request.groupId).int32(request.generationId).string(request.memberId)
    if (version >= 3) w.string(null)
    w.tags()
  },
  decode (r) {
    const response = { throttleTimeMs: r.int32(), errorCode: r.int16() }
    r.tags()
    return response
  }
}
