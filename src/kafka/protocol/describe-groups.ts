/**
 * DescribeGroups (key 15), v1-v5: a group's state, protocol and members with their metadata and assignment bytes,
 * asked of the group's coordinator. kmirror reads its own groups with it (`kmirror status`): the library's admin
 * client decodes every member as a consumer, which a kmirror member is not.
 *
 * Version notes (Kafka's DescribeGroupsRequest/Response.json): v0 is gone in Kafka 4.0 (KIP-896), so v1 (Kafka
 * 0.11, throttle time) is the floor; v3 adds includeAuthorizedOperations and authorizedOperations; v4 adds each
 * member's group instance id. v5 (flexible) adds nothing kmirror reads: v4 is the newest spoken, which every
 * broker from 2.4 to 4.x answers (2.1-2.3 answer v1-v3). v6 (KIP-1043) answers a group that does not exist with
 * GROUP_ID_NOT_FOUND where v4 says Dead with no error: group-describer.ts and the exactly-once orphan check
 * (runtime/orphan-transactions.ts) read Dead as "no such group", so a v6 needs that error mapped to Dead first.
 */
import type { ApiSpec } from './api.ts'

export interface DescribeGroupsRequest {
  readonly groups: readonly string[]
}

export interface DescribedMember {
  readonly memberId: string
  readonly clientId: string
  readonly clientHost: string
  readonly metadata: Buffer
  readonly assignment: Buffer
}

export interface DescribedGroup {
  readonly errorCode: number
  readonly groupId: string
  readonly state: string
  readonly protocolType: string
  readonly protocol: string
  readonly members: readonly DescribedMember[]
}

export interface DescribeGroupsResponse {
  readonly throttleTimeMs: number
  readonly groups: readonly DescribedGroup[]
}

export const DescribeGroupsApi: ApiSpec<DescribeGroupsRequest, DescribeGroupsResponse> = {
  key: 15,
  name: 'DescribeGroups',
  minVersion: 1,
  maxVersion: 4,
  flexibleFrom: 5,
  encode (w, version, request) {
    w.int32(request.groups.length)
    for (const group of request.groups) w.string(group)
    if (version >= 3) w.bool(false)
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const groups = r.structs(r => {
      const errorCode = r.int16()
      const groupId = r.string()
      const state = r.string()
      const protocolType = r.string()
      const protocol = r.string()
      const members = r.structs(r => {
        const memberId = r.string()
        if (version >= 4) r.nullableString()
        return { memberId, clientId: r.string(), clientHost: r.string(), metadata: r.bytes() ?? Buffer.alloc(0), assignment: r.bytes() ?? Buffer.alloc(0) }
      })
      if (version >= 3) r.int32()
      return { errorCode, groupId, state, protocolType, protocol, members }
    })
    return { throttleTimeMs, groups }
  }
}
