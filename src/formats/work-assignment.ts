/**
 * The bytes kmirror members exchange through the group protocol (protocol type `kmirror`, protocol `sticky-v1`):
 * a member's metadata in JoinGroup, and the assignment the leader hands each member through SyncGroup. Kafka's
 * Struct encoding (struct-codec.ts): big-endian, INT16-length strings, INT32-count arrays, -1 = null.
 *
 *   MemberMetadata: version INT16, memberName STRING, transactionalId NULLABLE_STRING, owned [STRING]
 *   Assignment:     version INT16, error INT16, generation INT32, leaderName STRING,
 *                   assigned [STRING], revoked [STRING], fence [STRING],
 *                   members [memberName STRING, transactionalId NULLABLE_STRING, partitions INT32, jobs [STRING]]
 *
 * `members` (kmirror's addition to the layout of the design) tells every member who is in this generation and
 * what each runs (partition count, job names): for `/status` on any member, and so a member that becomes leader
 * knows whom the previous generation had (to fence the transactional ids of those gone).
 *
 * Keys are workKey strings (cluster/work.ts). Forward compatibility: a newer version may only append fields, so a
 * reader reads the fields it knows and ignores the rest; a negative version, a truncated or garbled payload is a
 * DECODE error naming the part and the byte.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { encodeInt16, encodeInt32, encodeString, StructReader } from './struct-codec.ts'

export const WORK_ASSIGNMENT_VERSION = 0

export interface MemberMetadata {
  readonly version: number
  /** host:pid:startTime, shown in status. */
  readonly memberName: string
  /** The member's transactional id in exactly-once mode; null otherwise. */
  readonly transactionalId: string | null
  /** Keys of the work the member runs now. */
  readonly owned: readonly string[]
}

/** Error of an assignment: 0, or why the leader gave this member nothing. */
export const AssignmentErrors = {
  NONE: 0,
  /** The leader could not read this member's metadata (another program's, or garbled): nothing assigned. */
  MEMBER_METADATA_INVALID: 1
} as const

export interface WorkAssignment {
  readonly version: number
  readonly error: number
  readonly generation: number
  readonly leaderName: string
  /** The member's whole set after this round. */
  readonly assigned: readonly string[]
  /** Keys the member must stop (then rejoin at once). */
  readonly revoked: readonly string[]
  /** Transactional ids to fence before starting the assigned work (lost members' ids). */
  readonly fence: readonly string[]
  /** Every member of this generation after this round, by name. */
  readonly members: readonly GenerationMember[]
}

export interface GenerationMember {
  readonly memberName: string
  readonly transactionalId: string | null
  /** Partitions it runs after this round. */
  readonly partitions: number
  /** Jobs it runs after this round (job names). */
  readonly jobs: readonly string[]
}

function encodeNullableString (value: string | null, field: string): Buffer {
  return value === null ? encodeInt16(-1, field) : encodeString(value, field)
}

function encodeStrings (values: readonly string[], field: string): Buffer[] {
  return [encodeInt32(values.length, `${field} (count)`), ...values.map((v, i) => encodeString(v, `${field}[${i}]`))]
}

export function encodeMemberMetadata (m: Omit<MemberMetadata, 'version'>): Buffer {
  return Buffer.concat([
    encodeInt16(WORK_ASSIGNMENT_VERSION, 'version'),
    encodeString(m.memberName, 'memberName'),
    encodeNullableString(m.transactionalId, 'transactionalId'),
    ...encodeStrings(m.owned, 'owned')
  ])
}

export function encodeWorkAssignment (a: Omit<WorkAssignment, 'version'>): Buffer {
  return Buffer.concat([
    encodeInt16(WORK_ASSIGNMENT_VERSION, 'version'),
    encodeInt16(a.error, 'error'),
    encodeInt32(a.generation, 'generation'),
    encodeString(a.leaderName, 'leaderName'),
    ...encodeStrings(a.assigned, 'assigned'),
    ...encodeStrings(a.revoked, 'revoked'),
    ...encodeStrings(a.fence, 'fence'),
    encodeInt32(a.members.length, 'members (count)'),
    ...a.members.flatMap((m, i) => [
      encodeString(m.memberName, `members[${i}].memberName`),
      encodeNullableString(m.transactionalId, `members[${i}].transactionalId`),
      encodeInt32(m.partitions, `members[${i}].partitions`),
      ...encodeStrings(m.jobs, `members[${i}].jobs`)
    ])
  ])
}

export function decodeMemberMetadata (bytes: Buffer, what = 'kmirror member metadata'): MemberMetadata {
  const r = new StructReader(bytes, what)
  const version = readVersion(r, bytes, what)
  return { version, memberName: r.readString('memberName'), transactionalId: r.readNullableString('transactionalId'), owned: readStrings(r, 'owned', bytes, what) }
}

export function decodeWorkAssignment (bytes: Buffer, what = 'kmirror assignment'): WorkAssignment {
  const r = new StructReader(bytes, what)
  const version = readVersion(r, bytes, what)
  return {
    version,
    error: r.readInt16('error'),
    generation: r.readInt32('generation'),
    leaderName: r.readString('leaderName'),
    assigned: readStrings(r, 'assigned', bytes, what),
    revoked: readStrings(r, 'revoked', bytes, what),
    fence: readStrings(r, 'fence', bytes, what),
    members: readMembers(r, bytes, what)
  }
}

function readMembers (r: StructReader, bytes: Buffer, what: string): GenerationMember[] {
  const count = r.readInt32('members (count)')
  // name (2) + transactional id (2) + partitions (4) + jobs count (4) at least per member.
  if (count < 0 || count * 12 > r.remaining) throw decodeError(what, `field members claims ${count} entries but ${r.remaining} bytes remain (truncated or garbled)`, bytes)
  const members: GenerationMember[] = []
  for (let i = 0; i < count; i++) {
    members.push({
      memberName: r.readString(`members[${i}].memberName`),
      transactionalId: r.readNullableString(`members[${i}].transactionalId`),
      partitions: r.readInt32(`members[${i}].partitions`),
      jobs: readStrings(r, `members[${i}].jobs`, bytes, what)
    })
  }
  return members
}

function readVersion (r: StructReader, bytes: Buffer, what: string): number {
  const version = r.readInt16('version')
  if (version < 0) throw decodeError(what, `version ${version} is negative: not written by kmirror`, bytes)
  return version
}

function readStrings (r: StructReader, field: string, bytes: Buffer, what: string): string[] {
  const count = r.readInt32(`${field} (count)`)
  // Each string takes at least its 2-byte length: a larger count is garbage, not a reason to allocate.
  if (count < 0 || count * 2 > r.remaining) throw decodeError(what, `field ${field} claims ${count} entries but ${r.remaining} bytes remain (truncated or garbled)`, bytes)
  const values: string[] = []
  for (let i = 0; i < count; i++) values.push(r.readString(`${field}[${i}]`))
  return values
}

function decodeError (what: string, problem: string, bytes: Buffer): KmirrorError {
  return new KmirrorError(ErrorCodes.DECODE, `cannot decode ${what}: ${problem}`, { details: { record: what, length: bytes.length, hexPrefix: bytes.subarray(0, 64).toString('hex') } })
}
