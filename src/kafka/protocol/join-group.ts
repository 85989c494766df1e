/**
 * JoinGroup (key 11), v3-v9: join (or rejoin) a group with the protocols this member speaks; the coordinator
 * answers when every member has joined, the leader with every member's metadata.
 *
 * Version notes (Kafka's JoinGroupRequest/Response.json): v3 is Kafka 2.1 (v0-1 were removed in 4.0.0 and
 * restored in 4.0.1); v4 is the two-step join: a member joining with an empty member id is answered
 * MEMBER_ID_REQUIRED with its id and joins again with it (KIP-394); v5 adds group.instance.id (static membership,
 * KIP-345: kmirror sends null); v6 is flexible; v7 answers the protocol type and makes the protocol name nullable
 * (KIP-559); v8 sends a reason (KIP-800); v9 answers SkipAssignment (only for KIP-814 server-side assignors).
 */
import type { ApiSpec } from './api.ts'

export interface JoinGroupProtocol {
  readonly name: string
  readonly metadata: Buffer
}

export interface JoinGroupRequest {
  readonly groupId: string
  readonly sessionTimeoutMs: number
  readonly rebalanceTimeoutMs: number
  /** Empty on the first join. */
  readonly memberId: string
  readonly protocolType: string
  readonly protocols: readonly JoinGroupProtocol[]
  /** Why the member (re)joins, for the broker's log (v8+). */
  readonly reason: string | null
}

export interface JoinGroupMember {
  readonly memberId: string
  readonly groupInstanceId: string | null
  readonly metadata: Buffer
}

export interface JoinGroupResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
  readonly generationId: number
  /** v7+; null before. */
  readonly protocolType: string | null
  readonly protocolName: string | null
  readonly leader: string
  readonly skipAssignment: boolean
  readonly memberId: string
  /** Only the leader gets the members. */
  readonly members: readonly JoinGroupMember[]
}

export const JoinGroupApi: ApiSpec<JoinGroupRequest, JoinGroupResponse> = {
  key: 11,
  name: 'JoinGroup',
  minVersion: 3,
  maxVersion: 9,
  flexibleFrom: 6,
  encode (w, version, request) {
    w.string(request.groupId).int32(request.sessionTimeoutMs).int32(request.rebalanceTimeoutMs).string(request.memberId)
    if (version >= 5) w.string(null)
    w.string(request.protocolType)
    w.structs(request.protocols, (w, protocol) => { w.string(protocol.name).bytes(protocol.metadata) })
    if (version >= 8) w.string(request.reason)
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const errorCode = r.int16()
    const generationId = r.int32()
    const protocolType = version >= 7 ? r.nullableString() : null
    const protocolName = r.nullableString()
    const leader = r.string()
    const skipAssignment = version >= 9 ? r.bool() : false
    const memberId = r.string()
    const members = r.structs(r => ({
      memberId: r.string(),
      groupInstanceId: version >= 5 ? r.nullableString() : null,
      metadata: r.bytes() ?? Buffer.alloc(0)
    }))
    r.tags()
    return { throttleTimeMs, errorCode, generationId, protocolType, protocolName, leader, skipAssignment, memberId, members }
  }
}
