import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { OffsetSpec } from '../../../src/failover/offset-spec.ts'
import { checkScope, wantedScope } from '../../../src/failover/offsets-set-scope.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

const EARLIEST: OffsetSpec = { kind: 'earliest' }
const committed = new Map([[partitionKey('orders', 0), 5], [partitionKey('orders', 1), 7], [partitionKey('gone', 0), 3]])
const counts = new Map([['orders', 2], ['billing', 3]])
/** Cluster B as the tool lines name it: a secured cluster, so they ask for the client properties. */
const B = { alias: 'B', brokers: 'b:9092', protocol: 'SASL_SSL' }

describe('offsets set: the partitions of a group in scope', () => {
  it('Given --all-topics and a group with offsets for a topic the cluster does not list (deleted, or not describable), then that topic is left out with a note naming the group, the topic and how to remove them; the others are planned', () => {
    const scope = checkScope(wantedScope(EARLIEST, undefined, 'app', committed), counts, 'app', B)
    assert.deepEqual([...scope.partitions], [['orders', [0, 1]]])
    assert.deepEqual(scope.notes, ['group app has committed offsets for topic gone, which cluster B does not list (deleted since, or not visible to ' +
      'kmirror\'s principal: grant it DESCRIBE on the topic to plan it): left as they are (to remove them, as a principal allowed to delete the group\'s offsets: kafka-consumer-groups.sh --bootstrap-server b:9092 --command-config ADMIN_PROPERTIES_FILE_OF_B --delete-offsets --group app --topic gone)'])
  })

  it('Given --all-topics and offsets for partitions a re-created topic no longer has, then those partitions are left out with a note', () => {
    const scope = checkScope(wantedScope(EARLIEST, undefined, 'app', new Map([[partitionKey('orders', 0), 1], [partitionKey('orders', 4), 9]])), counts, 'app', B)
    assert.deepEqual([...scope.partitions], [['orders', [0]]])
    assert.deepEqual(scope.notes, ['group app has committed offsets for partition(s) 4 of topic orders, which has partitions 0..1 on cluster B (re-created with fewer partitions): those are left as they are'])
  })

  it('Given a topic the operator named (--topic, or a --from-file line) that does not exist, then it is still a usage error naming topic and cluster', () => {
    const named = wantedScope(EARLIEST, [{ topic: 'gone' }], 'app', committed)
    assert.throws(() => checkScope(named, counts, 'app', B), (err: unknown) => err instanceof KmirrorError && err.code === ErrorCodes.USAGE && err.message === 'topic gone does not exist on cluster B')
    const file = wantedScope({ kind: 'file', positions: [{ group: 'app', topic: 'gone', partition: 0, offset: 1 }] }, undefined, 'app', committed)
    assert.throws(() => checkScope(file, counts, 'app', B), /topic gone does not exist on cluster B/)
    assert.throws(() => checkScope(wantedScope(EARLIEST, [{ topic: 'orders', partitions: [0, 2] }], 'app', committed), counts, 'app', B), /topic orders on cluster B has partitions 0..1, not 2/)
  })

  it('Given --topic T without partitions, then every partition of T is in scope, whatever the group committed', () => {
    const scope = checkScope(wantedScope(EARLIEST, [{ topic: 'billing' }, { topic: 'orders', partitions: [1, 1] }], 'app', committed), counts, 'app', B)
    assert.deepEqual([...scope.partitions], [['billing', [0, 1, 2]], ['orders', [1]]])
    assert.deepEqual(scope.notes, [])
  })
})
