import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { compileJavaRegexList, JavaRegexError, translateJavaRegex } from '../../../src/policy/java-regex.ts'

/** Expected outcomes below were checked against java.util.regex (OpenJDK 17) with Pattern.compile(p).matcher(s).matches(). */
function matches (patterns: readonly string[], subject: string): boolean {
  const re = compileJavaRegexList(patterns)
  return re !== null && re.test(subject)
}

function assertRejected (pattern: string, problem: RegExp): void {
  assert.throws(() => compileJavaRegexList([pattern]), (err: unknown) => {
    assert.ok(err instanceof JavaRegexError)
    assert.equal(err.pattern, pattern)
    assert.match(err.message, problem)
    assert.ok(err.message.includes(JSON.stringify(pattern)), 'the message names the pattern')
    return true
  })
}

describe('compileJavaRegexList', () => {
  it('returns null for an empty list, so an empty include matches nothing and an empty exclude excludes nothing', () => {
    assert.equal(compileJavaRegexList([]), null)
  })

  it('requires the whole name to match, as Matcher.matches does', () => {
    assert.equal(matches(['orders'], 'orders'), true)
    assert.equal(matches(['orders'], 'orders-v2'), false)
    assert.equal(matches(['orders'], 'my-orders'), false)
    assert.equal(matches(['ord'], 'orders'), false)
  })

  it('joins the list with | so any element may match the whole name', () => {
    assert.equal(matches(['a.*', 'b'], 'abc'), true)
    assert.equal(matches(['a.*', 'b'], 'b'), true)
    assert.equal(matches(['a.*', 'b'], 'bc'), false)
    assert.equal(matches(['a', 'ab'], 'ab'), true)
  })

  it('matches the default topics.exclude list against internal, replica and double-underscore topics but not ordinary ones', () => {
    const exclude = ['.*[\\-\\.]internal', '.*\\.replica', '__.*']
    assert.equal(matches(exclude, 'mm2-offsets.A.internal'), true)
    assert.equal(matches(exclude, 'mm2-configs.A-internal'), true)
    assert.equal(matches(exclude, 'x.replica'), true)
    assert.equal(matches(exclude, '__consumer_offsets'), true)
    assert.equal(matches(exclude, 'orders'), false)
    assert.equal(matches(exclude, 'xinternal'), false)
  })

  it('matches the default groups.exclude list against console and connect groups', () => {
    const exclude = ['console-consumer-.*', 'connect-.*', '__.*']
    assert.equal(matches(exclude, 'console-consumer-4711'), true)
    assert.equal(matches(exclude, 'connect-mm2'), true)
    assert.equal(matches(exclude, 'my-group'), false)
  })

  it('treats the dot of the default config.properties.exclude entries as escaped', () => {
    const exclude = ['min\\.insync\\.replicas', 'message\\.timestamp\\.type']
    assert.equal(matches(exclude, 'min.insync.replicas'), true)
    assert.equal(matches(exclude, 'minXinsyncXreplicas'), false)
  })

  it('turns a leading (?i) into a flag that covers every later list element, as in the joined Java pattern', () => {
    assert.equal(matches(['(?i)orders'], 'ORDERS'), true)
    assert.equal(matches(['(?i)foo', 'bar'], 'BAR'), true)
    assert.equal(translateJavaRegex('(?i)foo').flags, 'iu')
  })

  it('scopes a (?i) that is not at the start to the rest of its group, across alternatives', () => {
    assert.equal(matches(['foo', '(?i)bar'], 'FOO'), false)
    assert.equal(matches(['foo', '(?i)bar'], 'BAR'), true)
    assert.equal(matches(['a(?i)b|c'], 'C'), true)
    assert.equal(matches(['a(?i)b|c'], 'aB'), true)
    assert.equal(matches(['a(?i)b|c'], 'Ab'), false)
    assert.equal(matches(['(?i:a)b'], 'Ab'), true)
    assert.equal(matches(['(?i:a)b'], 'AB'), false)
  })

  it('reads \\Q...\\E as literal text, also when \\E is missing', () => {
    assert.equal(matches(['\\Qa.b\\E'], 'a.b'), true)
    assert.equal(matches(['\\Qa.b\\E'], 'aXb'), false)
    assert.equal(matches(['\\Qa.b'], 'a.b'), true)
    assert.equal(matches(['[\\Q]\\E]'], ']'), true)
  })

  it('accepts Java escapes of punctuation that u-mode JavaScript would reject', () => {
    assert.equal(matches(['\\-'], '-'), true)
    assert.equal(matches(['\\_'], '_'), true)
    assert.equal(matches(['a\\ b'], 'a b'), true)
    assert.equal(matches(['a}'], 'a}'), true)
    assert.equal(matches([']'], ']'), true)
  })

  it('reads Java character class corner cases the Java way', () => {
    assert.equal(matches(['[]a]'], ']'), true)
    assert.equal(matches(['[^]a]'], 'b'), true)
    assert.equal(matches(['[a-]'], '-'), true)
    assert.equal(matches(['[\\d-z]'], '-'), true)
    assert.equal(matches(['[--a]'], '-'), true)
    assert.equal(matches(['[a&b]'], '&'), true)
    assert.equal(matches(['[\\w-]+'], 'my-topic_1'), true)
  })

  it('translates POSIX and Unicode property classes', () => {
    assert.equal(matches(['\\p{Alpha}+'], 'abc'), true)
    assert.equal(matches(['\\p{Lower}'], 'é'), false)
    assert.equal(matches(['[\\p{Alpha}_]'], '_'), true)
    assert.equal(matches(['\\p{Punct}+'], '!/@[`{~'), true)
    assert.equal(matches(['\\p{L}+'], 'é'), true)
    assert.equal(matches(['\\pL'], 'a'), true)
    assert.equal(matches(['\\p{IsLatin}'], 'a'), true)
    assert.equal(matches(['\\p{IsLATIN}'], 'a'), true)
    assert.equal(matches(['\\p{IsAlphabetic}'], 'é'), true)
    assert.equal(matches(['\\p{sc=Latin}'], 'a'), true)
    assert.equal(matches(['\\P{Alpha}'], '1'), true)
  })

  it('uses Java\'s ASCII \\s and its dot, which excludes \\x85 too', () => {
    assert.equal(matches(['\\s'], '\u000b'), true)
    assert.equal(matches(['\\s'], '\u00a0'), false)
    assert.equal(matches(['.'], '\u0085'), false)
    assert.equal(matches(['.'], '\n'), false)
    assert.equal(matches(['(?s).'], '\n'), true)
    assert.equal(matches(['.'], '\u{1F600}'), true)
  })

  it('translates octal, hex, unicode and control escapes to the same characters', () => {
    assert.equal(matches(['\\0101'], 'A'), true)
    assert.equal(matches(['\\x41'], 'A'), true)
    assert.equal(matches(['\\x{1F600}'], '\u{1F600}'), true)
    assert.equal(matches(['\\uD83D\\uDE00'], '\u{1F600}'), true)
    assert.equal(matches(['\\u00e9'], 'é'), true)
    assert.equal(matches(['\\cA'], '\u0001'), true)
    assert.equal(matches(['\\e\\a\\t'], '\u001b\u0007\t'), true)
  })

  it('reads a multi-digit back reference only as far as groups exist, as Java does', () => {
    assert.equal(matches(['(a)\\10'], 'aa0'), true)
    assert.equal(matches(['(?<n>a)\\k<n>'], 'aa'), true)
  })

  it('skips whitespace and comments in (?x) mode, also inside classes', () => {
    assert.equal(matches(['(?x) a b # c'], 'ab'), true)
    assert.equal(matches(['(?x)[ a]'], ' '), false)
    assert.equal(matches(['(?x)\\ '], ' '), true)
  })

  it('keeps lazy quantifiers and bounded repetition', () => {
    assert.equal(matches(['a*?'], ''), true)
    assert.equal(matches(['a{3}'], 'aaa'), true)
    assert.equal(matches(['a{2,}'], 'aaaa'), true)
    assert.equal(matches(['a{1,2}'], 'aaa'), false)
  })

  it('rejects what JavaScript cannot express, naming the pattern and the construct', () => {
    assertRejected('a++', /possessive quantifier/)
    assertRejected('x*+', /possessive quantifier/)
    assertRejected('a?+', /possessive quantifier/)
    assertRejected('(?>a)', /atomic groups/)
    assertRejected('[a-z&&[^m]]', /intersection/)
    assertRejected('[[a]b]', /union/)
    assertRejected('\\p{InGreek}', /blocks/)
    assertRejected('\\p{javaLowerCase}', /java\.lang\.Character/)
    assertRejected('(?U)\\w', /UNICODE_CHARACTER_CLASS/)
    assertRejected('\\X', /grapheme/)
  })

  it('rejects Java syntax errors with a message naming the problem', () => {
    assertRejected('(', /unclosed group/)
    assertRejected('a)', /unmatched/)
    assertRejected('[a', /unclosed character class/)
    assertRejected('[z-a]', /illegal character range/)
    assertRejected('a{', /quantifier/)
    assertRejected('a{2,1}', /repetition range/)
    assertRejected('\\y', /unsupported escape sequence \\y/)
    assertRejected('\\', /lone backslash/)
    assertRejected('\\0', /octal/)
    assertRejected('\\x4', /hexadecimal/)
    assertRejected('a**', /not a valid regular expression/)
    assertRejected('\\2', /group that does not exist/)
  })

  it('names the failing list element rather than the joined pattern', () => {
    assert.throws(() => compileJavaRegexList(['orders', 'a++', 'b']), (err: unknown) => {
      assert.ok(err instanceof JavaRegexError)
      assert.equal(err.pattern, 'a++')
      return true
    })
  })
})
