/**
 * `kmirror offsets set`: plans moving one group's committed offsets on one cluster, per partition of a topic,
 * to a chosen position (offset-spec.ts), with the rules of plan.ts. Reads only; apply.ts writes.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { withDeadline } from './clients.ts'
import type { OffsetsPlan } from './failover.ts'
import { resolveOffset, type OffsetSpec } from './offset-spec.ts'
import { partitionId, PlanKinds, planGroup, type WantedOffset } from './plan.ts'

export interface OffsetsSetRequest {
  readonly cluster: ClusterClientConfig
  readonly group: string
  readonly topic: string
  readonly partition?: number
  readonly spec: OffsetSpec
  readonly force: boolean
  readonly timeoutMs: number
}

/** Throws a USAGE KmirrorError (exit 2) for a missing topic or partition and for positions out of range. */
export async function planOffsetsSet (request: OffsetsSetRequest): Promise<OffsetsPlan> {
  const { cluster, group, topic } = request
  const clients = new ClusterClients(cluster, 'offsets-set')
  const lookup = clients.lookup
  try {
    return await withDeadline((async () => {
      await clients.checkBrokers()
      const description = (await clients.admin.describeTopics([topic])).get(topic)
      if (description === undefined) throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} does not exist on cluster ${cluster.alias}`)
      if (request.partition !== undefined && (request.partition < 0 || request.partition >= description.partitions)) {
        throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} on cluster ${cluster.alias} has partitions 0..${description.partitions - 1}, not ${request.partition}`)
      }
      const partitions = request.partition !== undefined ? [request.partition] : Array.from({ length: description.partitions }, (_, p) => p)
      const [earliest, latest, atTime] = await Promise.all([
        lookup.earliest(topic, partitions), lookup.latest(topic, partitions),
        request.spec.kind === 'datetime' ? lookup.forTimestamp(topic, partitions, request.spec.timestampMs) : Promise.resolve(undefined)
      ])
      const state = (await clients.admin.groups.describeGroups([group])).get(group)
      const current = new Map((await clients.admin.groups.listCommittedOffsets(group)).map(c => [partitionId(c.topic, c.partition), c.offset]))
      const wanted: WantedOffset[] = []
      const errors: string[] = []
      partitions.forEach((p, i) => {
        const now = current.get(partitionId(topic, p)) ?? null
        const resolved = resolveOffset(request.spec, { current: now, earliest: earliest[i]!, latest: latest[i]!, ...(atTime === undefined ? {} : { atTime: atTime[i]! }) }, `${topic}-${p}`)
        if ('error' in resolved) errors.push(resolved.error)
        else wanted.push({ topic, partition: p, offset: resolved.offset, exact: true, processed: now })
      })
      if (errors.length > 0) throw new KmirrorError(ErrorCodes.USAGE, errors.join('; '))
      const plan = planGroup({
        kind: PlanKinds.OFFSETS_SET, group, cluster: cluster.alias, force: request.force,
        state: state?.state ?? 'Dead', members: state?.members ?? 0, current, wanted
      })
      const instant = request.spec.kind === 'datetime' ? { instant: new Date(request.spec.timestampMs).toISOString() } : {}
      return { kind: PlanKinds.OFFSETS_SET, flow: '', from: cluster.alias, to: cluster.alias, basis: 'manual' as const, notes: [], groups: [plan], ...instant }
    })(), request.timeoutMs, cluster)
  } finally {
    await clients.close()
  }
}
