/**
 * Loop prevention for IdentityReplicationPolicy, where a topic name cannot tell where its records came from
 * (mm2-spec §3.3: MM2 loops forever in active-active with it). kmirror marks every record it replicates with
 * the header `kmirror.origin` = the alias (UTF-8) of the cluster the record was first produced on, and a flow
 * S->T does not copy a record whose origin is T: it came from T and would go back.
 *
 * Invariants:
 * - A record that already carries `kmirror.origin` keeps it unchanged (first occurrence decides; a null value
 *   is an unknown origin, copied as is); the header is appended only when absent, so the other headers keep
 *   their order and repeats.
 * - Heartbeat topics are left alone: their names already trace their path (`A.heartbeats`), cycle detection
 *   works for them, and their records stay byte for byte MM2's.
 * - Skipped records leave gaps in the source offsets of what is written. The offset-sync tracker emits a sync
 *   at the first record after every gap (the source-to-target difference changes there), so every copied
 *   record still translates exactly.
 * - Only flows with IdentityReplicationPolicy pay for this; with the default policy it is never created.
 *
 * Example, A<->B with identity: a record produced on A reaches B with `kmirror.origin: A`; flow B->A sees
 * origin A = its target and skips it. A record produced on B gets `kmirror.origin: B` on its way to A.
 */
import { ReplicationPolicyClasses, type ReplicationPolicyConfig } from '../config/types.ts'
import type { FetchedPartition, FetchedRecord } from '../kafka/record-fetcher.ts'
import { createReplicationPolicy, type ReplicationPolicy } from '../policy/replication-policy.ts'

export const ORIGIN_HEADER = 'kmirror.origin'

export interface ProvenanceFlow {
  readonly replicationPolicy: ReplicationPolicyConfig
  readonly source: { readonly alias: string }
  readonly target: { readonly alias: string }
}

export interface MarkedPartition {
  /** The partition with looping records removed and the origin header added where it was missing. */
  readonly partition: FetchedPartition
  /** Records not copied because they originated on the target. */
  readonly skipped: number
}

const ORIGIN_KEY = Buffer.from(ORIGIN_HEADER, 'utf8')

/** The origin header of a record: its value, `null` for a header with a null value, `undefined` when absent. */
export function originOf (record: { readonly headers: readonly FetchedRecord['headers'][number][] }): Buffer | null | undefined {
  for (const [key, value] of record.headers) if (key.equals(ORIGIN_KEY)) return value
  return undefined
}

export class ProvenanceMarker {
  readonly #policy: ReplicationPolicy
  readonly #sourceOrigin: Buffer
  readonly #targetOrigin: Buffer
  readonly #heartbeatTopics = new Map<string, boolean>()

  constructor (flow: ProvenanceFlow) {
    this.#policy = createReplicationPolicy(flow.replicationPolicy)
    this.#sourceOrigin = Buffer.from(flow.source.alias, 'utf8')
    this.#targetOrigin = Buffer.from(flow.target.alias, 'utf8')
  }

  mark (f: FetchedPartition): MarkedPartition {
    if (f.records.length === 0 || this.#isHeartbeats(f.topic)) return { partition: f, skipped: 0 }
    const records: FetchedRecord[] = []
    let bytes = 0
    for (const r of f.records) {
      const origin = originOf(r)
      if (origin !== undefined && origin !== null && origin.equals(this.#targetOrigin)) continue
      const out = origin === undefined ? { ...r, headers: [...r.headers, [ORIGIN_KEY, this.#sourceOrigin]] as FetchedRecord['headers'] } : r
      records.push(out)
      bytes += recordBytes(out)
    }
    return { partition: { ...f, records, bytes }, skipped: f.records.length - records.length }
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
