import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { selectFlows } from '../../../src/config/load.ts'
import { ConfigError } from '../../../src/errors.ts'
import { flowOf, parse } from './fixtures.ts'

const THREE = ['clusters = A, B, C', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'C.bootstrap.servers = c:9092']

function config (...lines: string[]) {
  return parse([...THREE, ...lines].join('\n'))
}

function enabledNames (...lines: string[]): string[] {
  return config(...lines).flows.filter(f => f.enabled).map(f => f.name)
}

describe('flows and A->B.enabled', () => {
  it('lists every ordered pair of distinct clusters, in the order of clusters, enabled or not', () => {
    assert.deepEqual(config().flows.map(f => f.name), ['A->B', 'A->C', 'B->A', 'B->C', 'C->A', 'C->B'])
  })

  it('leaves flows off unless A->B.enabled is true', () => {
    assert.deepEqual(enabledNames('A->B.enabled = true'), ['A->B'])
  })

  it('reads A->B.enabled in any case', () => {
    assert.deepEqual(enabledNames('A->B.enabled = TRUE', 'B->A.enabled = False'), ['A->B'])
  })

  it('reads A->B.enabled = yes as false, like Boolean.parseBoolean', () => {
    assert.deepEqual(enabledNames('A->B.enabled = yes', 'A->C.enabled = 1'), [])
  })

  it('enables a flow written "true " with a trailing blank while heartbeats are on, as MM2\'s connector trims it', () => {
    assert.deepEqual(enabledNames('A->B.enabled = true '), ['A->B'])
    assert.deepEqual(enabledNames('A->B.enabled = true ', 'emit.heartbeats.enabled = false'), [])
  })

  it('enables every flow with a top-level enabled = true, as MM2 does', () => {
    assert.equal(enabledNames('enabled = true').length, 6)
  })

  it('is frozen all the way down', () => {
    const flow = flowOf(config('A->B.enabled = true'), 'A->B')
    assert.ok(Object.isFrozen(flow))
    assert.ok(Object.isFrozen(flow.topics))
    assert.ok(Object.isFrozen(flow.source.consumer))
    assert.ok(Object.isFrozen(flow.properties))
  })
})

describe('selectFlows', () => {
  it('returns the enabled flows only', () => {
    assert.deepEqual(selectFlows(config('A->B.enabled = true', 'C->A.enabled = true')).map(f => f.name), ['A->B', 'C->A'])
  })

  it('keeps only flows whose target is listed in --clusters, as MM2 does', () => {
    const all = config('A->B.enabled = true', 'C->A.enabled = true', 'B->C.enabled = true')
    assert.deepEqual(selectFlows(all, ['A', 'C']).map(f => f.name), ['B->C', 'C->A'])
  })

  it('rejects an alias in --clusters that is not in clusters', () => {
    assert.throws(() => selectFlows(config('A->B.enabled = true'), ['B', 'D']), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.equal(err.problems.length, 1)
      assert.match(err.problems[0]?.message ?? '', /--clusters names "D", which is not in clusters = A, B, C/)
      return true
    })
  })

  it('fails when no enabled flow is left, naming the key to set', () => {
    const cases = [{ lines: [], clusters: undefined }, { lines: ['A->B.enabled = true'], clusters: ['C'] }]
    for (const { lines, clusters } of cases) {
      assert.throws(() => selectFlows(config(...lines), clusters), (err: unknown) => {
        assert.ok(err instanceof ConfigError)
        assert.match(err.message, /no enabled source->target replication flows.*\(set e\.g\. A->B\.enabled = true\)/)
        return true
      })
    }
  })
})
