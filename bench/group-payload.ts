/**
 * How many bytes kmirror's group protocol carries for a flow of P partitions shared by N instances: the member
 * metadata each instance sends in JoinGroup (the keys it owns), the assignments the leader sends in SyncGroup (each
 * member's whole set plus the generation's member list), and their sum, which the group coordinator stores as one
 * record in `__consumer_offsets` (bounded by the broker's `message.max.bytes`, 1 MiB by default). No Kafka needed:
 * the bytes come from kmirror's own assignor and encoders (src/kafka/group-leader.ts, src/formats/work-assignment.ts),
 * in the steady state (every member already owns what it is assigned: the largest metadata).
 *
 *   node bench/group-payload.ts [--topics 1000] [--partitions 5] [--members 1,2,3,10,30,100] [--name-length 26]
 */
import { parseArgs } from 'node:util'
import type { WorkItem } from '../src/cluster/work.ts'
import { decodeWorkAssignment, encodeMemberMetadata } from '../src/formats/work-assignment.ts'
import { planAssignments } from '../src/kafka/group-leader.ts'
import type { JoinGroupResponse } from '../src/kafka/protocol/join-group.ts'
import { silentLogger } from '../src/logger.ts'
import { JOB_NAMES } from '../src/runtime/job-registry.ts'

/** A member id as the coordinator makes it: client id, '-', a UUID. */
const memberId = (i: number): string => `kmirror-bench-${i}-${'0'.repeat(8)}-0000-4000-8000-${String(i).padStart(12, '0')}`
/** A member name as kmirror makes it: host:pid:startTime. */
const memberName = (i: number): string => `mirror-host-${i}.example.internal:${10_000 + i}:1796170000000`

function work (topics: number, partitions: number, nameLength: number): WorkItem[] {
  const items: WorkItem[] = JOB_NAMES.map(job => ({ kind: 'job', job }))
  for (let t = 0; t < topics; t++) {
    const topic = `orders-${String(t).padStart(Math.max(1, nameLength - 7), '0')}`
    for (let p = 0; p < partitions; p++) items.push({ kind: 'partition', topic, partition: p })
  }
  return items
}

function join (members: number, owned: readonly (readonly string[])[]): JoinGroupResponse {
  return {
    throttleTimeMs: 0, errorCode: 0, generationId: 7, protocolType: 'kmirror', protocolName: 'sticky-v1', leader: memberId(0), skipAssignment: false, memberId: memberId(0),
    members: Array.from({ length: members }, (_, i) => ({
      memberId: memberId(i), groupInstanceId: null,
      metadata: encodeMemberMetadata({ memberName: memberName(i), transactionalId: null, owned: owned[i] ?? [] })
    }))
  }
}

interface Sizes {
  metadataMax: number
  metadataSum: number
  assignmentMax: number
  assignmentSum: number
}

/** Sizes in the steady state: a first round from nothing, then a round where each member owns its assignment. */
function sizes (items: readonly WorkItem[], members: number): Sizes {
  const first = planAssignments(join(members, []), items, [], 'bench', silentLogger())
  const owned = first.assignments.map(a => decodeWorkAssignment(a.assignment).assigned)
  const steady = join(members, owned)
  const second = planAssignments(steady, items, [], 'bench', silentLogger())
  const metadata = steady.members.map(m => m.metadata.length)
  const assignments = second.assignments.map(a => a.assignment.length)
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
  return { metadataMax: Math.max(...metadata), metadataSum: sum(metadata), assignmentMax: Math.max(...assignments), assignmentSum: sum(assignments) }
}

const kb = (bytes: number): string => (bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })

function main (): void {
  const { values } = parseArgs({
    options: {
      topics: { type: 'string', default: '1000' },
      partitions: { type: 'string', default: '5' },
      members: { type: 'string', default: '1,2,3,10,30,100' },
      'name-length': { type: 'string', default: '26' }
    }
  })
  const items = work(Number(values.topics), Number(values.partitions), Number(values['name-length']))
  const partitions = items.filter(i => i.kind === 'partition').length
  process.stdout.write(`${partitions.toLocaleString('en-US')} partitions (${values.topics} topics × ${values.partitions}, topic names of ${values['name-length']} characters) and ${JOB_NAMES.length} jobs; KiB\n\n`)
  process.stdout.write('| members | JoinGroup metadata, largest member | JoinGroup response to the leader (all metadata) | SyncGroup request of the leader (all assignments) | SyncGroup response, largest | group record (metadata + assignments) |\n|---:|---:|---:|---:|---:|---:|\n')
  for (const n of values.members.split(',').map(Number)) {
    const s = sizes(items, n)
    process.stdout.write(`| ${n} | ${kb(s.metadataMax)} | ${kb(s.metadataSum)} | ${kb(s.assignmentSum)} | ${kb(s.assignmentMax)} | ${kb(s.metadataSum + s.assignmentSum)} |\n`)
  }
}

main()
