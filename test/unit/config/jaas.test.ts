import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jaasOption, jaasOptionTexts, parseJaas, parseJaasConfig } from '../../../src/config/jaas.ts'

describe('jaasOption', () => {
  const line = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p\\"w\\\\d" serviceName=kafka;'

  it('reads a quoted value', () => {
    assert.equal(jaasOption(line, 'username'), 'alice')
  })

  it('unescapes escaped quotes and backslashes inside a quoted value', () => {
    assert.equal(jaasOption(line, 'password'), 'p"w\\d')
  })

  it('reads an unquoted value up to the next blank or semicolon', () => {
    assert.equal(jaasOption(line, 'serviceName'), 'kafka')
    assert.equal(jaasOption('LoginModule required username=bob password=x;', 'password'), 'x')
  })

  it('allows blanks around = and an empty quoted value', () => {
    assert.equal(jaasOption('M required username = "carol" password="";', 'username'), 'carol')
    assert.equal(jaasOption('M required username = "carol" password="";', 'password'), '')
  })

  it('returns undefined for a missing option, and does not match an option whose name merely ends with it', () => {
    assert.equal(jaasOption(line, 'token'), undefined)
    assert.equal(jaasOption('M required myusername="mallory";', 'username'), undefined)
    assert.equal(jaasOption('', 'username'), undefined)
  })

  it('reads an option at the very start of the text', () => {
    assert.equal(jaasOption('username="dave"', 'username'), 'dave')
  })
})

describe('parseJaasConfig (as Kafka\'s JaasConfig and java.io.StreamTokenizer read it)', () => {
  const module = 'org.apache.kafka.common.security.plain.PlainLoginModule'
  const options = (text: string): Readonly<Record<string, string>> => {
    const parsed = parseJaasConfig(text)
    assert.ok('entries' in parsed, 'problem' in parsed ? parsed.problem : '')
    return parsed.entries[0]!.options
  }
  const problem = (text: string): string => {
    const parsed = parseJaasConfig(text)
    assert.ok('problem' in parsed, `expected a problem for ${text}`)
    return parsed.problem
  }

  it('reads single-quoted values, blanks inside quotes and = or ; inside quotes', () => {
    assert.deepEqual(options(`${module} required username='alice' password='p w;=x';`), { username: 'alice', password: 'p w;=x' })
  })

  it('decodes \\t, \\n and octal escapes inside quotes as Java does (\\377 is one character, \\477 is \\47 then 7)', () => {
    assert.equal(options(`${module} required password="a\\tb\\nc";`).password, 'a\tb\nc')
    assert.equal(options(`${module} required password="\\101\\1012";`).password, 'AA2')
    assert.equal(options(`${module} required password="\\377|\\477";`).password, '\u00ff|\u00277')
    assert.equal(options(`${module} required password="q\\"d\\\\e\\'";`).password, 'q"d\\e\'')
  })

  it('skips /* */ and // comments, and a lone / ends an unquoted value with the rest of its line', () => {
    assert.deepEqual(options(`/* old */ ${module} required // the login\n username="u" /* password="old" */ password="new";`), { username: 'u', password: 'new' })
    assert.deepEqual(options(`${module} required uri=https://idp/token\n password="p";`), { uri: 'https:', password: 'p' })
  })

  it('closes an unclosed quote at the end of its line', () => {
    assert.deepEqual(options(`${module} required password="abc\n username="u";`), { password: 'abc', username: 'u' })
  })

  it('reads every entry, the flag in any case', () => {
    const parsed = parseJaasConfig(`${module} REQUIRED username="a"; other.Module Optional;`)
    assert.ok('entries' in parsed)
    assert.deepEqual(parsed.entries.map(e => [e.loginModule, e.flag]), [[module, 'REQUIRED'], ['other.Module', 'Optional']])
  })

  it('refuses what Java refuses, saying why without quoting a value', () => {
    assert.match(problem(`${module} required username="u" password="p"`), /does not end with a semicolon/)
    assert.match(problem(`${module} mandatory username="u";`), /control flag after .*PlainLoginModule is not one of required, requisite, sufficient, optional/)
    assert.match(problem(`${module}`), /control flag is missing/)
    assert.match(problem(`${module} required password=;`), /option password has no value/)
    assert.match(problem('  /* nothing */ '), /names no login module/)
    const bare = problem(`${module} required username="u" "s3cret-pw";`)
    assert.match(bare, /after option username, name="value" options or the closing ; were expected/)
    assert.doesNotMatch(bare, /s3cret/)
    assert.equal(parseJaas(`${module} required password="p"`), undefined)
  })
})

describe('jaasOptionTexts', () => {
  it('finds every name=value with where its value was written, even in a config Java refuses', () => {
    const text = 'M required a=\'x y\' b="q" c=z'
    assert.deepEqual(jaasOptionTexts(text).map(o => [o.name, o.value, text.slice(o.start, o.end)]), [['a', 'x y', '\'x y\''], ['b', 'q', '"q"'], ['c', 'z', 'z']])
  })
})
