import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseProperties, PropertiesSyntaxError } from '../../../src/config/properties.ts'
import { ConfigError } from '../../../src/errors.ts'
import { flowOf, parse, twoClusters } from './fixtures.ts'

describe('mm2.properties is read with java.util.Properties syntax', () => {
  it('keeps an inline "# comment" in the value, because # only starts a comment at the start of a line', () => {
    const config = parse(twoClusters('A->B.topics = orders # the orders topic'))
    assert.deepEqual(flowOf(config, 'A->B').topics, ['orders # the orders topic'])
  })

  it('treats lines starting with ! or # (after leading blanks) as comments', () => {
    const config = parse(twoClusters('! A->B.topics = bang', '   # A->B.topics = hash'))
    assert.deepEqual(flowOf(config, 'A->B').topics, ['.*'])
  })

  it('joins a backslash-continued line and drops the continuation line\'s leading blanks', () => {
    const config = parse(twoClusters('A->B.topics = orders, \\', '    payments'))
    assert.deepEqual(flowOf(config, 'A->B').topics, ['orders', 'payments'])
  })

  it('decodes \\uXXXX escapes in keys and values', () => {
    const config = parse(twoClusters('A->B.topics = caf\\u00e9', 'A->B.\\u0072eplication.factor = 3'))
    assert.deepEqual(flowOf(config, 'A->B').topics, ['café'])
    assert.equal(flowOf(config, 'A->B').replicationFactor, 3)
  })

  it('accepts ":" and whitespace as separators, as Java does', () => {
    const config = parse(twoClusters('A->B.replication.factor: 4', 'A->B.offset.lag.max 7'))
    assert.equal(flowOf(config, 'A->B').replicationFactor, 4)
    assert.equal(flowOf(config, 'A->B').offsetLagMax, 7)
  })

  it('lets the last of duplicate keys win', () => {
    const config = parse(twoClusters('A->B.replication.factor = 4', 'A->B.replication.factor = 5'))
    assert.equal(flowOf(config, 'A->B').replicationFactor, 5)
  })

  it('keeps trailing blanks of a value, as Java does', () => {
    assert.equal(parseProperties('k = v  \n').values.k, 'v  ')
  })

  it('records the line of every entry and whether it had a = or : separator', () => {
    const parsed = parseProperties('# c\na = 1\nb: 2\nc 3\n')
    assert.deepEqual(parsed.lines.map(l => [l.key, l.line, l.hasSeparator]), [['a', 2, true], ['b', 3, true], ['c', 4, false]])
  })

  it('detects a backslash continuation at the very end of the file', () => {
    assert.equal(parseProperties('a = 1\nb = x\\').danglingContinuation?.key, 'b')
    assert.equal(parseProperties('a = 1\nb = x\\\n\n').danglingContinuation?.key, 'b')
    assert.equal(parseProperties('a = x\\\\\n').danglingContinuation, undefined)
    assert.equal(parseProperties('a = x\\\n  y\n').danglingContinuation, undefined)
  })

  it('stores a __proto__ key as an ordinary key', () => {
    const parsed = parseProperties('__proto__ = x\n')
    assert.equal(Object.getOwnPropertyDescriptor(parsed.values, '__proto__')?.value, 'x')
    assert.equal(({} as Record<string, unknown>).x, undefined)
  })

  it('refuses a malformed \\u escape, as Java does, naming its line: a config error, not a crash', () => {
    assert.throws(() => parseProperties('a = 1\nb = x\\u12G4\n'), (err: unknown) => err instanceof PropertiesSyntaxError && err.line === 2 &&
      err.message === "line 2: malformed \\uXXXX escape at column 6 (Java's Properties.load refuses the file too): a \\u must be followed by 4 hexadecimal digits; write a literal backslash as \\\\")
    assert.throws(() => parseProperties('a = \\u12'), (err: unknown) => err instanceof PropertiesSyntaxError && err.line === 1)
    assert.throws(() => parse(twoClusters('A->B.topics = x\\uZZ12')), (err: unknown) => err instanceof ConfigError && /line \d+: malformed \\uXXXX escape at column 16/.test(err.message))
  })

  it('never quotes the characters after a malformed \\u (they may be a password\'s), also on a continued line starting with #', () => {
    assert.throws(() => parseProperties('A.ssl.key.password = Z9\\uq#7!kk\n'), (err: unknown) => err instanceof PropertiesSyntaxError && !err.message.includes('q#7'))
    assert.throws(() => parseProperties('a = one, \\\n#\\uq#7!kk\n'), (err: unknown) => err instanceof PropertiesSyntaxError && err.line === 2 && !err.message.includes('q#7'))
  })

  it('reads a valid \\u escape, an escaped backslash before u, and \\u in a comment', () => {
    assert.deepEqual({ ...parseProperties('# \\uZZ\na = \\u0041\nb = x\\\\uZZ\n').values }, { a: 'A', b: 'x\\uZZ' })
  })
})
