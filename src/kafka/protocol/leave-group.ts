/**
 * LeaveGroup (key 13), v2-v4: a member leaves at once (a clean stop), so the group rebalances now instead of
 * after its session timeout.
 *
 * Version notes (Kafka's LeaveGroupRequest/Response.json): v2 is Kafka 2.1; v3 sends a list of members, each
 * with its group.instance.id (KIP-345, batched), and answers an error per member; v4 is flexible. (v5 adds a
 * reason per member; kmirror stops at v4.)
 */
import type { ApiSpec } from './api.ts'

export interface LeaveGroupRequest {
  readonly groupId: string
  readonly memberId: string
}

export interface LeaveGroupResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
  /** v3+: the error of each member that left (this member only); empty before. */
  readonly members: readonly { readonly memberId: string, readonly errorCode: number }[]
}

export const LeaveGroupApi: ApiSpec<LeaveGroupRequest, LeaveGroupResponse> = {
  key: 13,
  name: 'LeaveGroup',
  minVersion: 2,
  maxVersion: 4,
  flexibleFrom: 4,
  encode (w, version, request) {
    w.string(request.groupId)
    if (version < 3) w.string(request.memberId)
    else w.structs([request.memberId], (w, memberId) => { w.string(memberId).string(null) })
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const errorCode = r.int16()
    const members = version >= 3
      ? r.structs(r => {
        const memberId = r.string()
        r.nullableString()
        return { memberId, errorCode: r.int16() }
      })
      : []
    r.tags()
    return { throttleTimeMs, errorCode, members }
  }
}
