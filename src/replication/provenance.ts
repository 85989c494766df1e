/**
 * Loop prevention for IdentityReplicationPolicy, where a topic name cannot tell where its records came from
 * (mm2-spec §3.3: MM2 loops forever in active-active with it). kmirror marks every record it replicates with
 * two headers: `kmirror.origin` = the alias (UTF-8) of the cluster the record was first produced on, and
 * `kmirror.path` = every cluster alias the record has been on, in order, the one it is written to last
 * (comma-separated: aliases come from the comma-separated `clusters` list and cannot hold one). A flow S->T
 * does not copy a record whose path holds T: it has been on T and would go back. Origin alone is not enough
 * with three clusters or more: A's record would go A->B->C->B... (origin A is never a target there).
 *
 * Invariants:
 * - A record that already carries `kmirror.origin` keeps it unchanged (first occurrence decides; a null value
 *   is an unknown origin, kept as is); the header is appended only when absent, so the other headers keep
 *   their order and repeats.
 * - `kmirror.path` is replaced where it is, or appended after the origin when absent. Without it (a record
 *   produced on the source, or copied by an older kmirror that wrote only the origin), the path is the origin
 *   if known, then the source: the record has been on the source in any case.
 * - Heartbeat topics are left alone: their names already trace their path (`A.heartbeats`), cycle detection
 *   works for them, and their records stay byte for byte MM2's.
 * - Skipped records leave gaps in the source offsets of what is written. The offset-sync tracker emits a sync
 *   at the first record after every gap (the source-to-target difference changes there), so every copied
 *   record still translates exactly.
 * - Only flows with IdentityReplicationPolicy pay for this; with the default policy it is never created.
 *
 * - A record is relayed only along its origin's tree of the mesh (policy/identity-routes.ts): in a full mesh a
 *   record of A reaches C from A, and flow B->C skips it. An origin outside the configuration's clusters is
 *   relayed by every flow, its path alone preventing loops.
 *
 * Example, ring A->B->C->A with identity: a record produced on A reaches B with origin A and path `A,B`, then C
 * with path `A,B,C`; flow C->A sees A in its path and skips it.
 */
import { ReplicationPolicyClasses, type FlowConfig, type ReplicationPolicyConfig } from '../config/types.ts'
import type { FetchedPartition, FetchedRecord } from '../kafka/record-fetcher.ts'
import { createReplicationPolicy, type ReplicationPolicy } from '../policy/replication-policy.ts'

export const ORIGIN_HEADER = 'kmirror.origin'

export const PATH_HEADER = 'kmirror.path'

export interface ProvenanceFlow {
  readonly replicationPolicy: ReplicationPolicyConfig
  readonly source: { readonly alias: string }
  readonly target: { readonly alias: string }
  /** The configuration's clusters and the origins this flow relays; absent: every origin is relayed. */
  readonly identityMesh?: FlowConfig['identityMesh']
}

export interface MarkedPartition {
  /** The partition with looping records removed and the origin header added where it was missing. */
  readonly partition: FetchedPartition
  /** Records not copied because they have been on the target, or another flow brings them there. */
  readonly skipped: number
}

const ORIGIN_KEY = Buffer.from(ORIGIN_HEADER, 'utf8')
const PATH_KEY = Buffer.from(PATH_HEADER, 'utf8')
const PATH_SEPARATOR = ','

/** The value of header `key`: a buffer, `null` for a null value, `undefined` when absent. */
function headerOf (record: { readonly headers: readonly FetchedRecord['headers'][number][] }, key: Buffer): Buffer | null | undefined {
  for (const [k, value] of record.headers) if (k.equals(key)) return value
  return undefined
}

/** The clusters a record has been on, the one it is read from last. */
export function pathOf (record: { readonly headers: readonly FetchedRecord['headers'][number][] }, source: string): string[] {
  const header = headerOf(record, PATH_KEY)
  let path: string[]
  if (header !== undefined && header !== null) {
    path = header.toString('utf8').split(PATH_SEPARATOR)
  } else {
    const origin = headerOf(record, ORIGIN_KEY)
    path = origin === undefined || origin === null ? [] : [origin.toString('utf8')]
  }
  if (path.at(-1) !== source) path.push(source)
  return path
}

/** The origin header of a record: its value, `null` for a header with a null value, `undefined` when absent. */
export function originOf (record: { readonly headers: readonly FetchedRecord['headers'][number][] }): Buffer | null | undefined {
  return headerOf(record, ORIGIN_KEY)
}

export class ProvenanceMarker {
  readonly #policy: ReplicationPolicy
  readonly #source: string
  readonly #target: string
  readonly #sourceOrigin: Buffer
  readonly #mesh: { readonly clusters: ReadonlySet<string>, readonly relays: ReadonlySet<string> } | null
  readonly #heartbeatTopics = new Map<string, boolean>()

  constructor (flow: ProvenanceFlow) {
    this.#policy = createReplicationPolicy(flow.replicationPolicy)
    this.#source = flow.source.alias
    this.#target = flow.target.alias
    this.#sourceOrigin = Buffer.from(flow.source.alias, 'utf8')
    const mesh = flow.identityMesh
    this.#mesh = mesh === undefined ? null : { clusters: new Set(mesh.clusters), relays: new Set(mesh.relays) }
  }

  mark (f: FetchedPartition): MarkedPartition {
    if (f.records.length === 0 || this.#isHeartbeats(f.topic)) return { partition: f, skipped: 0 }
    const records: FetchedRecord[] = []
    let bytes = 0
    for (const r of f.records) {
      const path = pathOf(r, this.#source)
      if (!this.#relays(path)) continue
      const out = { ...r, headers: this.#headersFor(r, path) }
      records.push(out)
      bytes += recordBytes(out)
    }
    return { partition: { ...f, records, bytes }, skipped: f.records.length - records.length }
  }

  /** Whether this flow copies a record with this path: it has not been on the target, and its origin's tree goes through here. */
  #relays (path: readonly string[]): boolean {
    if (path.includes(this.#target)) return false
    const origin = path[0]!
    return this.#mesh === null || !this.#mesh.clusters.has(origin) || this.#mesh.relays.has(origin)
  }

  /** The record's headers with the origin added when absent and the path, the target added, replaced or appended. */
  #headersFor (r: FetchedRecord, path: readonly string[]): FetchedRecord['headers'] {
    const pathValue = Buffer.from([...path, this.#target].join(PATH_SEPARATOR), 'utf8')
    const headers = r.headers.map(([k, v]) => (k.equals(PATH_KEY) ? [k, pathValue] : [k, v])) as FetchedRecord['headers']
    if (originOf(r) === undefined) headers.push([ORIGIN_KEY, this.#sourceOrigin])
    if (headerOf(r, PATH_KEY) === undefined) headers.push([PATH_KEY, pathValue])
    return headers
  }

  #isHeartbeats (topic: string): boolean {
    let known = this.#heartbeatTopics.get(topic)
    if (known === undefined) {
      known = this.#policy.isHeartbeatsTopic(topic)
      this.#heartbeatTopics.set(topic, known)
    }
    return known
  }
}

/** A marker for flows whose policy cannot tell origins from names (Identity); null for every other flow. */
export function createProvenanceMarker (flow: Partial<ProvenanceFlow>): ProvenanceMarker | null {
  if (flow.replicationPolicy?.className !== ReplicationPolicyClasses.IDENTITY || flow.source === undefined || flow.target === undefined) return null
  return new ProvenanceMarker(flow as ProvenanceFlow)
}

function recordBytes (r: FetchedRecord): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0)
  for (const [k, v] of r.headers) n += k.length + (v?.length ?? 0)
  return n
}
