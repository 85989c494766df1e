import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jaasOption, jaasOptionTexts, parseJaas, parseJaasConfig, type JaasEntry, type JaasParse } from '../../../src/config/jaas.ts'

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
    assert.deepEqual(options(`${module} required password=a/b c\n user="u";`), { password: 'a', user: 'u' })
    assert.deepEqual(options(`${module} required password=a/\nb=c\n user="u";`), { password: 'a', user: 'u' })
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
    assert.equal(problem(`${module} required username="u" password="p"`), `the entry of ${module} does not end with a semicolon (;)`)
    assert.equal(problem(`${module} mandatory username="u";`), `the control flag of ${module} is not one of required, requisite, sufficient, optional`)
    assert.equal(problem(`${module}`), `the control flag of ${module} is missing`)
    assert.match(problem(`${module} required password=;`), /^option password has no value \(put values in double quotes/)
    assert.match(problem(`${module} required password=12345678;`), /^option password has a value Java does not read \(put values in double quotes/)
    assert.match(problem('  /* nothing */ '), /names no login module/)
    assert.equal(problem('= required;'), 'entry 1 does not start with a login module class')
    const bare = problem(`${module} required username="u" "s3cret-pw";`)
    assert.match(bare, /after option username, name="value" options or the closing ; were expected/)
    assert.doesNotMatch(bare, /s3cret/)
    assert.equal(parseJaas(`${module} required password="p"`), undefined)
  })
})

describe('parseJaasConfig: characters as Kafka 3.9.1 and 4.1.1 read them (StreamTokenizer\'s default syntax, - _ $ letters)', () => {
  // Every outcome below is what the JaasConfig of kafka-clients 3.9.1 and 4.1.1 made of the same text.
  const module = 'org.apache.kafka.common.security.scram.ScramLoginModule'
  const read = (options: string): JaasParse => parseJaasConfig(`${module} required ${options};`)
  const entry = (options: string): JaasEntry => {
    const parsed = read(options)
    assert.ok('entries' in parsed, `expected Java to read ${options}: ${'problem' in parsed ? parsed.problem : ''}`)
    return parsed.entries[0]!
  }
  const accepted = (options: string): Readonly<Record<string, string>> => entry(options).options
  const refused = (options: string): string => {
    const parsed = read(options)
    assert.ok('problem' in parsed, `expected Java to refuse ${options}`)
    return parsed.problem
  }

  it('refuses an unquoted value with a character that stands alone (@ ! # :), reading it quoted', () => {
    for (const value of ['P@ssw0rd', 'abc!def', 'x#y', 'user@example.com', 'https://idp/token']) {
      assert.match(refused(`password=${value}`), /^after option password, name="value" options or the closing ; were expected \(put values in double quotes/, value)
      assert.deepEqual(accepted(`password="${value}"`), { password: value })
    }
  })

  it('refuses an unquoted value that Java reads as a number or a lone -: one that starts with a digit, . or -', () => {
    for (const value of ['12345678', '-5', '.5x', '1abc']) assert.match(refused(`password=${value}`), /^option password has a value Java does not read/, value)
    assert.match(refused('password=-abc'), /^option password has a value Java does not read/)
    assert.deepEqual(accepted('password="12345678" user=\'-abc\''), { password: '12345678', user: '-abc' })
  })

  it('reads an unquoted value of letters, then digits, ., -, _ and $ as one word', () => {
    assert.deepEqual(accepted('password=s3cr3t.v-2_x$9 a=$b c=_d'), { password: 's3cr3t.v-2_x$9', a: '$b', c: '_d' })
  })

  it('reads characters 160 and up as letters, and 127-159 as characters that stand alone', () => {
    for (const code of [127, 128, 129, 159]) {
      assert.match(refused(`password=a${String.fromCharCode(code)}b`), /^after option password/, `character ${code}`)
      assert.deepEqual(accepted(`password="a${String.fromCharCode(code)}b"`), { password: `a${String.fromCharCode(code)}b` })
    }
    for (const letter of ['\u00a0', '\u00ff', '\u0100', '\u4e2d', '\ud83d\ude00']) {
      assert.deepEqual(accepted(`password=a${letter}b ${letter}=${letter}`), { password: `a${letter}b`, [letter]: letter })
    }
  })

  it('refuses uri=https://idp/token then a line: the : stands alone and the // comment takes the rest of the line', () => {
    assert.match(refused('uri=https://idp/token\n password="p"'), /^after option uri, name="value" options or the closing ; were expected/)
    assert.deepEqual(accepted('uri="https://idp/token"\n password="p"'), { uri: 'https://idp/token', password: 'p' })
  })

  it('reads an option whose name is no word (Java\'s null name), leaves it out and says there is one', () => {
    assert.deepEqual(accepted('username="u" @=x 123=y ==z'), { username: 'u' })
    assert.deepEqual(accepted('password=abc\u0080=d'), { password: 'abc' })
    assert.equal(entry('@=x').nullNamedOption, true)
    assert.equal(entry('"@"=x password="p"').nullNamedOption, false)
  })
})

describe('parseJaasConfig: a refusal quotes no value that may be a secret', () => {
  const module = 'org.apache.kafka.common.security.plain.PlainLoginModule'
  const problem = (text: string): string => {
    const parsed = parseJaasConfig(text)
    assert.ok('problem' in parsed, `expected a problem for ${text}`)
    return parsed.problem
  }

  it('Given an unquoted password with a ; then the rest of it is not named as a login module, but as entry 2', () => {
    const text = problem(`${module} required username="u" password=Xy7pq;Secr3tTail;`)
    assert.equal(text, 'the control flag of entry 2 is not one of required, requisite, sufficient, optional')
  })

  it('names only the first entry\'s login module, and only when it is a class name', () => {
    assert.equal(problem('Secr3tTail'), 'the control flag of entry 1 is missing')
    assert.equal(problem('Secr3tTail required password=x'), 'entry 1 does not end with a semicolon (;)')
    assert.equal(problem(`${module} required password=x; other.Module required`), 'entry 2 does not end with a semicolon (;)')
  })

  it('names an option only where its name cannot be the rest of an unquoted value', () => {
    assert.match(problem(`${module} required password=Ab cd=;`), /^option 2 of the entry of .*PlainLoginModule has no value/)
    assert.match(problem(`${module} required password=Ab cd=ef gh;`), /^after option 2 of the entry of .*PlainLoginModule, name="value"/)
    assert.match(problem(`${module} required password="Ab" cd=;`), /^option cd has no value/)
    assert.match(problem(`${module} required password=x; a.B required Tail2=;`), /^option 1 of entry 2 has no value/)
  })

  it('never holds a fragment of a secret, whatever the mistake', () => {
    const texts = [
      `${module} required password=Xy7pq;Secr3tTail;`, `${module} required password=Xy7pq;Secr3tTail required x=;`,
      `${module} required password=Xy7pq;Secr3tTail.Part optional`, `${module} required password=Xy7pq Secr3tTail=;`,
      `${module} required password=Xy7pq Secr3tTail= ;`, `${module} required password=Xy7pq Secr3tTail=ab Secr3tTail;`,
      `${module} required password=Xy7pq@Secr3tTail;`, `${module} required password=Xy7pq:Secr3tTail=;`,
      `${module} required password=Xy7pq "Secr3tTail";`, `${module} required password="Xy7pq" Secr3tTail;`,
      `${module} required password=Xy7pq;Secr3tTail=x;`, 'Xy7pq;Secr3tTail;', 'Xy7pq Secr3tTail', '"Xy7pq" "Secr3tTail" x=;',
      `${module} Xy7pq;`, `${module} required password=123Secr3tTail;`, `${module} required password=-Secr3tTail;`
    ]
    for (const text of texts) assert.doesNotMatch(problem(text), /Xy7pq|Secr3tTail/, text)
  })
})

describe('jaasOptionTexts', () => {
  it('finds every name=value with where its value was written, even in a config Java refuses', () => {
    const text = 'M required a=\'x y\' b="q" c=z'
    assert.deepEqual(jaasOptionTexts(text).map(o => [o.name, o.value, text.slice(o.start, o.end)]), [['a', 'x y', '\'x y\''], ['b', 'q', '"q"'], ['c', 'z', 'z']])
  })

  it('takes an unquoted value as written up to a blank, quote, ; or =, with what Java reads of it (as written when nothing)', () => {
    const text = 'M required password=P@ssw0rd;pin=12345678 x=-a/b\nuri=https://idp/token?a\ny=Ab@=c'
    assert.deepEqual(jaasOptionTexts(text).map(o => [o.name, o.value, text.slice(o.start, o.end)]),
      [['password', 'P', 'P@ssw0rd'], ['pin', '12345678', '12345678'], ['x', '-a/b', '-a/b'], ['uri', 'https', 'https://idp/token?a'], ['y', 'Ab', 'Ab@'], ['@', 'c', 'c']])
  })
})
