import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from 'commander'
import { joinListValues, parseJavaRegex, parseList, parseNonNegative, parsePort, secondsParser } from '../../../src/cli/flag-parsers.ts'

const LISTS = new Set(['--clusters', '--group'])
const VALUES = new Set(['--timeout', '--from', '--to', '--shift-by'])

describe('command-line value parsers', () => {
  it('reads comma lists and repeated flags, and refuses empty items', () => {
    assert.deepEqual(parseList('a,b', undefined), ['a', 'b'])
    assert.deepEqual(parseList('c', ['a', 'b']), ['a', 'b', 'c'])
    assert.throws(() => parseList('a,,b', undefined), InvalidArgumentError)
  })

  it('refuses seconds that are not a number instead of reading them as off', () => {
    const progress = secondsParser('no progress lines')
    assert.equal(progress('0'), 0)
    assert.equal(progress('2.5'), 2.5)
    for (const bad of ['abc', '', ' ', '-1', 'Infinity', 'NaN']) assert.throws(() => progress(bad), /is not a number of seconds \(0 or more; 0 = no progress lines\)/, bad)
    assert.throws(() => secondsParser()('0'), /is not a number of seconds above 0/)
  })

  it('checks ports, whole numbers and Java regexes', () => {
    assert.equal(parsePort('8080'), 8080)
    for (const bad of ['x', '-1', '65536', '']) assert.throws(() => parsePort(bad), /is not a TCP port/)
    assert.equal(parseNonNegative('3'), 3)
    for (const bad of ['-1', '1.5', 'a']) assert.throws(() => parseNonNegative(bad), /is not a whole number 0 or more/)
    assert.equal(parseJavaRegex('orders\\..*'), 'orders\\..*')
    assert.throws(() => parseJavaRegex('a(b'), /is not a Java regex kmirror can use/)
    assert.throws(() => parseJavaRegex('a++'), /is not a Java regex kmirror can use/)
  })
})

describe('the older space-separated list spelling', () => {
  it('keeps the file out of a list given before it', () => {
    assert.deepEqual(joinListValues(['--clusters', 'backup', 'mm2.properties'], LISTS, VALUES), ['--clusters', 'backup', 'mm2.properties'])
    assert.deepEqual(joinListValues(['--clusters', 'a', 'b', 'mm2.properties'], LISTS, VALUES), ['--clusters', 'a,b', 'mm2.properties'])
    assert.deepEqual(joinListValues(['--clusters', 'a', 'b', 'mm2.properties', '--timeout', '30'], LISTS, VALUES), ['--clusters', 'a,b', 'mm2.properties', '--timeout', '30'])
  })

  it('takes every word as a value when the file came before or comes after', () => {
    assert.deepEqual(joinListValues(['mm2.properties', '--clusters', 'a', 'b'], LISTS, VALUES), ['mm2.properties', '--clusters', 'a,b'])
    assert.deepEqual(joinListValues(['--group', 'g1', 'g2', '--from', 'A', 'mm2.properties'], LISTS, VALUES), ['--group', 'g1,g2', '--from', 'A', 'mm2.properties'])
    assert.deepEqual(joinListValues(['--shift-by', '-5', '--group', 'g', 'f'], LISTS, VALUES), ['--shift-by', '-5', '--group', 'g', 'f'])
  })
})
