import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { JavaRegexError } from '../../../src/policy/java-regex.ts'
import { createTopicFilter } from '../../../src/policy/topic-filter.ts'

const DEFAULT_EXCLUDE = ['.*[\\-\\.]internal', '.*\\.replica', '__.*']

describe('createTopicFilter', () => {
  it('includes a topic matching the include list and no exclude pattern', () => {
    const filter = createTopicFilter({ topics: ['.*'], topicsExclude: DEFAULT_EXCLUDE })
    assert.equal(filter('orders'), true)
  })

  it('lets the exclude list win over the include list', () => {
    const filter = createTopicFilter({ topics: ['.*'], topicsExclude: DEFAULT_EXCLUDE })
    assert.equal(filter('mm2-offsets.A.internal'), false)
    assert.equal(filter('x.replica'), false)
    assert.equal(filter('__consumer_offsets'), false)
    assert.equal(filter('connect-configs-internal'), false)
  })

  it('includes nothing when the include list is empty', () => {
    const filter = createTopicFilter({ topics: [], topicsExclude: [] })
    assert.equal(filter('orders'), false)
  })

  it('excludes nothing when the exclude list is empty', () => {
    const filter = createTopicFilter({ topics: ['.*'], topicsExclude: [] })
    assert.equal(filter('__consumer_offsets'), true)
  })

  it('matches whole names only', () => {
    const filter = createTopicFilter({ topics: ['orders'], topicsExclude: [] })
    assert.equal(filter('orders'), true)
    assert.equal(filter('orders2'), false)
  })

  it('throws JavaRegexError for a pattern JavaScript cannot express', () => {
    assert.throws(() => createTopicFilter({ topics: ['a++'], topicsExclude: [] }), JavaRegexError)
  })
})
