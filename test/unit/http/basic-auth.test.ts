import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AuthOutcomes, BasicAuthenticator, parseAuthFile } from '../../../src/http/basic-auth.ts'

// `openssl passwd -5 -salt saltstring 'Hello world!'` and glibc's SHA-512-crypt of 'This is just a test'
const ALICE = 'alice:$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5'
const BOB = 'bob:$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0'

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

describe('basic authentication', () => {
  const authenticator = new BasicAuthenticator(parseAuthFile(`# users of the HTTP endpoint\n\n${ALICE}\r\n${BOB}\n`, 'users'))

  it('accepts each user with their password, SHA-256-crypt and SHA-512-crypt', () => {
    assert.equal(authenticator.isAuthorized(basic('alice', 'Hello world!')), true)
    assert.equal(authenticator.isAuthorized(basic('bob', 'This is just a test')), true)
    assert.equal(authenticator.isAuthorized(`basic ${Buffer.from('bob:This is just a test').toString('base64')}`), true)
  })

  it('refuses a missing header, another scheme, a wrong password, another user\'s password and an unknown user', () => {
    for (const header of [undefined, '', 'Bearer abc', basic('alice', 'hello world!'), basic('alice', 'This is just a test'), basic('carol', 'Hello world!'), 'Basic !!!', `Basic ${Buffer.from('alice').toString('base64')}`]) {
      assert.equal(authenticator.isAuthorized(header), false, String(header))
    }
  })

  it('accepts a verified header again, within its minute and after it, and never remembers a refused one', () => {
    const fresh = new BasicAuthenticator(parseAuthFile(ALICE, 'users'))
    const header = basic('alice', 'Hello world!')
    assert.equal(fresh.isAuthorized(header, 1_000), true)
    assert.equal(fresh.isAuthorized(header, 60_999), true)
    assert.equal(fresh.isAuthorized(basic('alice', 'nope'), 2_000), false)
    assert.equal(fresh.isAuthorized(header, 61_001), true)
  })

  it('keeps a verified header verified while it is used (sliding), so a flood of bad headers never throttles a scraper in use', () => {
    const fresh = new BasicAuthenticator(parseAuthFile(ALICE, 'users'))
    const header = basic('alice', 'Hello world!')
    assert.equal(fresh.check(header, 1_000), AuthOutcomes.ALLOWED)
    for (let at = 31_000; at <= 301_000; at += 30_000) {
      for (let i = 0; i < 10; i++) fresh.check(basic('mallory', `guess${at}-${i}`), at)
      assert.equal(fresh.check(header, at), AuthOutcomes.ALLOWED, `at ${at}`)
    }
  })

  it('refuses an overlong password without hashing it, and hashes at most 10 unverified headers a second (429 past that)', () => {
    const fresh = new BasicAuthenticator(parseAuthFile(ALICE, 'users'))
    const started = performance.now()
    assert.equal(fresh.check(basic('alice', 'x'.repeat(12_000)), 5_000), AuthOutcomes.REFUSED)
    assert.ok(performance.now() - started < 50, 'a 12,000-character password costs no hashing')
    for (let i = 0; i < 10; i++) assert.equal(fresh.check(basic('mallory', `guess${i}`), 7_100), AuthOutcomes.REFUSED)
    assert.equal(fresh.check(basic('alice', 'Hello world!'), 7_900), AuthOutcomes.THROTTLED)
    // a header verified before keeps working meanwhile; the next second hashes again
    assert.equal(fresh.check(basic('alice', 'Hello world!'), 8_000), AuthOutcomes.ALLOWED)
    for (let i = 0; i < 10; i++) fresh.check(basic('mallory', `again${i}`), 9_000)
    assert.equal(fresh.check(basic('alice', 'Hello world!'), 9_500), AuthOutcomes.ALLOWED)
  })

  it('refuses a file whose hash has more than 100000 rounds (each wrong guess would hold the data path)', () => {
    assert.throws(() => parseAuthFile('carol:$5$rounds=500000$salt$abcdefghijklmnopqrstuvwxyz', 'users'), /users line 1: the hash of user "carol" has rounds=500000, above 100000/)
  })

  it('names the file, the line and the user of a bad line, never its hash, and says how to make one', () => {
    const cases: readonly (readonly [string, RegExp])[] = [
      ['alice', /^users line 1 is not "user:hash": make each line with: printf '%s:%s\\n' USER "\$\(openssl passwd -5\)" >> FILE$/],
      [`# c\n${ALICE}\nbob:$2y$10$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012`, /^users line 3: the hash of user "bob" is not SHA-256-crypt or SHA-512-crypt/],
      ['bob:secret', /^users line 1: the hash of user "bob" is not SHA-256-crypt/],
      [`${ALICE}\n${ALICE}`, /^users line 2: user "alice" is listed twice/],
      ['# nobody\n', /^users lists no user/]
    ]
    for (const [text, message] of cases) {
      assert.throws(() => parseAuthFile(text, 'users'), (err: Error) => {
        assert.match(err.message, message)
        assert.ok(!err.message.includes('abcdefghij') && !err.message.includes('secret'), err.message)
        return true
      })
    }
  })
})
