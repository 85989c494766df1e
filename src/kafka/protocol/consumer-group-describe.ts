/**
 * ConsumerGroupDescribe (key 69), v0: a group of KIP-848 consumers (`group.protocol=consumer`) as its coordinator
 * describes it. DescribeGroups up to v4 answers such a group as Dead with no members, so `group-describer.ts` asks
 * this for every group DescribeGroups called Dead, on brokers that list it.
 *
 * Version notes (Kafka's ConsumerGroupDescribeRequest/Response.json): flexible from v0; v1 (Kafka 4.1) adds each
 * member's type, which kmirror does not read: v0 is the version spoken. Brokers list the API from Kafka 3.8 (3.7
 * only with unstable APIs on), but answer UNSUPPORTED_VERSION for every group while the consumer protocol is off
 * (the default before 4.0). A group that is not a KIP-848 group answers GROUP_ID_NOT_FOUND; before Kafka 4.0.1 a
 * group comes back once per __consumer_offsets partition of its coordinator, GROUP_ID_NOT_FOUND from all but its own.
 */
import type { ApiSpec } from './api.ts'
import type { ByteReader } from './wire.ts'

export interface ConsumerGroupDescribeRequest {
  readonly groups: readonly string[]
}

export interface DescribedConsumerGroup {
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly groupId: string
  /** Empty, Assigning, Reconciling, Stable or Dead. */
  readonly state: string
  readonly assignorName: string
  readonly members: readonly { readonly memberId: string, readonly clientId: string, readonly clientHost: string }[]
}

export interface ConsumerGroupDescribeResponse {
  readonly throttleTimeMs: number
  readonly groups: readonly DescribedConsumerGroup[]
}

/** A member's Assignment or TargetAssignment: topic partitions kmirror skips over. */
function skipAssignment (r: ByteReader): void {
  r.structs(r => { r.uuid(); r.string(); r.int32s() })
  r.tags()
}

export const ConsumerGroupDescribeApi: ApiSpec<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> = {
  key: 69,
  name: 'ConsumerGroupDescribe',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,
  encode (w, _version, request) {
    // A compact array of strings: no tagged fields per element, unlike structs.
    w.uvarint(request.groups.length + 1)
    for (const group of request.groups) w.string(group)
    w.bool(false).tags()
  },
  decode (r) {
    const throttleTimeMs = r.int32()
    const groups = r.structs((r): DescribedConsumerGroup => {
      const errorCode = r.int16()
      const errorMessage = r.nullableString()
      const groupId = r.string()
      const state = r.string()
      r.int32() // group epoch
      r.int32() // assignment epoch
      const assignorName = r.string()
      const members = r.structs(r => {
        const memberId = r.string()
        r.nullableString() // instance id
        r.nullableString() // rack id
        r.int32() // member epoch
        const clientId = r.string()
        const clientHost = r.string()
        const topics = r.uvarint() - 1
        for (let i = 0; i < topics; i++) r.string()
        r.nullableString() // subscribed topic regex
        skipAssignment(r)
        skipAssignment(r)
        return { memberId, clientId, clientHost }
      })
      r.int32() // authorized operations
      return { errorCode, errorMessage, groupId, state, assignorName, members }
    })
    r.tags()
    return { throttleTimeMs, groups }
  }
}
