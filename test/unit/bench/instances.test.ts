import assert from 'node:assert/strict'
import { test } from 'node:test'
import { instancesTables } from '../../../bench/instances-report.ts'
import { settled, type InstanceView } from '../../../bench/lib/instances.ts'

const view = (generation: number, members: number, partitions: number[]): InstanceView => ({ generation, members, partitions: partitions.map(p => `t-${p}`) })

test('instances settle when they agree on one generation of all of them and split every partition once, evenly', () => {
  assert.equal(settled([view(3, 2, [0, 1]), view(3, 2, [2, 3])], 4), true)
  assert.equal(settled([view(3, 2, [0, 1, 2]), view(3, 2, [3])], 4), false, 'uneven')
  assert.equal(settled([view(3, 2, [0, 1]), view(2, 2, [2, 3])], 4), false, 'two generations')
  assert.equal(settled([view(3, 2, [0, 1]), view(3, 2, [1, 3])], 4), false, 'partition 1 twice, 2 nowhere')
  assert.equal(settled([view(3, 1, [0, 1]), view(3, 2, [2, 3])], 4), false, 'one has not heard of the other')
  assert.equal(settled([view(3, 2, [0, 1]), null], 4), false, 'one does not answer')
  assert.equal(settled([view(1, 1, [0, 1, 2]), view(1, 1, [])].slice(0, 1), 3), true)
})

test('the instances tables have a column per instance count and list each process\'s figures in start order', () => {
  const [scale, events] = instancesTables([
    { instances: 1, records: 100, settleSeconds: 1.5, writeSeconds: 1, seconds: 2, firstRecordSeconds: 1, each: [{ partitions: 4, records: 100, cpuSeconds: 1.25, peakRssMiB: 150 }], onTarget: { records: 100, twice: 0, missing: 0, partitionsWithDuplicates: 0 } },
    { instances: 2, records: 100, settleSeconds: 4.25, writeSeconds: 1, seconds: 4, firstRecordSeconds: 1, each: [{ partitions: 2, records: 60, cpuSeconds: 1, peakRssMiB: 140 }, { partitions: 2, records: 41, cpuSeconds: 1, peakRssMiB: 141 }], onTarget: { records: 101, twice: 1, missing: 0, partitionsWithDuplicates: 1 } }
  ], [{ event: 'kill -9 of one of two', seconds: 7.04 }])
  assert.match(scale!, /^\| figure \| 1 instance \| 2 instances \|$/m)
  assert.match(scale!, /^\| partitions per instance \| 4 \| 2 \/ 2 \|$/m)
  assert.match(scale!, /^\| records copied twice, kmirror's counters \(sum − records\) \| 0 \| 1 \|$/m)
  assert.match(scale!, /^\| records copied twice, on the target \(partitions holding more than the source\) \| 0 \(0 partitions\) \| 1 \(1 partitions\) \|$/m)
  assert.match(scale!, /^\| records missing on the target \| 0 \| 0 \|$/m)
  assert.match(scale!, /^\| records\/s, all instances \(settled → all on target\) \| 50 \| 25 \|$/m)
  assert.match(scale!, /^\| group settled \(s, processes started → even split\) \| 1\.5 \| 4\.3 \|$/m)
  assert.match(scale!, /^\| peak RSS, all instances \(MiB\) \| 150 \| 281 \|$/m)
  assert.match(events!, /^\| kill -9 of one of two \| 7\.0 \|$/m)
})
