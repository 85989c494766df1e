import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { IntegerWidths, parseConfigBoolean, parseJavaBoolean, parseJavaInteger, splitList } from '../../../src/config/values.ts'

describe('Java value parsing', () => {
  it('splits ConfigDef lists on commas, trims around them, and keeps empty entries like split(s, -1)', () => {
    assert.deepEqual(splitList(' a , b,c '), ['a', 'b', 'c'])
    assert.deepEqual(splitList(''), [])
    assert.deepEqual(splitList('   '), [])
    assert.deepEqual(splitList('a,,b,'), ['a', '', 'b', ''])
  })

  it('reads ConfigDef booleans as trimmed true/false in any case', () => {
    assert.equal(parseConfigBoolean(' TRUE '), true)
    assert.equal(parseConfigBoolean('False'), false)
    assert.equal(parseConfigBoolean('yes'), undefined)
  })

  it('reads Boolean.parseBoolean: only "true" in any case, untrimmed', () => {
    assert.equal(parseJavaBoolean('tRuE'), true)
    assert.equal(parseJavaBoolean('true '), false)
    assert.equal(parseJavaBoolean('yes'), false)
    assert.equal(parseJavaBoolean(undefined), false)
  })

  it('parses Java integers within the range of their width', () => {
    assert.equal(parseJavaInteger(' +42 ', IntegerWidths.INT), 42)
    assert.equal(parseJavaInteger('-1', IntegerWidths.SHORT), -1)
    assert.equal(parseJavaInteger('32768', IntegerWidths.SHORT), undefined)
    assert.equal(parseJavaInteger('2147483648', IntegerWidths.INT), undefined)
    assert.equal(parseJavaInteger('9223372036854775807', IntegerWidths.LONG), 9223372036854775807)
    assert.equal(parseJavaInteger('1e3', IntegerWidths.LONG), undefined)
    assert.equal(parseJavaInteger('', IntegerWidths.LONG), undefined)
  })
})
