/**
 * SyncGroup (key 14), v2-v5: after a join, the leader sends every member's assignment; every member (the leader
 * too) gets its own back.
 *
 * Version notes (Kafka's SyncGroupRequest/Response.json): v2 is Kafka 2.1; v3 adds group.instance.id (kmirror
 * sends null); v4 is flexible; v5 sends and answers the protocol type and name (KIP-559), which the coordinator
 * checks against the group's.
 */
import type { ApiSpec } from './api.ts'

export interface SyncGroupAssignment {
  readonly memberId: string
  readonly assignment: Buffer
}

export interface SyncGroupRequest {
  readonly groupId: string
  readonly generationId: number
  readonly memberId: string
  readonly protocolType: string
  readonly protocolName: string
  /** The leader's assignments; empty from the other members. */
  readonly assignments: readonly SyncGroupAssignment[]
}

export interface SyncGroupResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
  readonly protocolType: string | null
  readonly protocolName: string | null
  readonly assignment: Buffer
}

export const SyncGroupApi: ApiSpec<SyncGroupRequest, SyncGroupResponse> = {
  key: 14,
  name: 'SyncGroup',
  minVersion: 2,
  maxVersion: 5,
  flexibleFrom: 4,
  encode (w, version, request) {
    w.string(request.groupId).int32(request.generationId).string(request.memberId)
    if (version >= 3) w.string(null)
    if (version >= 5) w.string(request.protocolType).string(request.protocolName)
    w.structs(request.assignments, (w, a) => { w.string(a.memberId).bytes(a.assignment) })
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const errorCode = r.int16()
    const protocolType = version >= 5 ? r.nullableString() : null
    const protocolName = version >= 5 ? r.nullableString() : null
    const assignment = r.bytes() ?? Buffer.alloc(0)
    r.tags()
    return { throttleTimeMs, errorCode, protocolType, protocolName, assignment }
  }
}
