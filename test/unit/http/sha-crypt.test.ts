import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseShaCryptSetting, shaCrypt } from '../../../src/http/sha-crypt.ts'

/**
 * Hashes made by glibc's crypt(3) (Python's crypt module on Debian 12) and, for the first, `openssl passwd -5
 * -salt saltstring` too: two independent implementations.
 */
const VECTORS: readonly (readonly [string, string])[] = [
  ['Hello world!', '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5'],
  ['Hello world!', '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA'],
  ['a very much longer text to encrypt.  This one even stretches over morethan one line.', '$5$rounds=1400$anotherlongsalts$Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1'],
  ['pässwörd:with colon', '$5$kmirror$uGVi5wOeyCPfvq9BvWoxDLcm2rdhfW2G.AL.dXbUKa9'],
  ['Hello world!', '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1'],
  ['a very much longer text to encrypt.  This one even stretches over morethan one line.', '$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1'],
  ['This is just a test', '$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0']
]

describe('SHA-crypt', () => {
  for (const [password, hash] of VECTORS) {
    it(`hashes ${JSON.stringify(password)} as crypt(3) does under ${hash.slice(0, hash.lastIndexOf('$'))}`, () => {
      const setting = parseShaCryptSetting(hash)
      assert.ok(setting)
      assert.equal(shaCrypt(password, setting), hash)
    })
  }

  it('cuts the salt at 16 characters and keeps rounds= only when it was written', () => {
    assert.deepEqual(parseShaCryptSetting('$5$rounds=10000$saltstringsaltstring'), { id: '5', rounds: 10000, explicitRounds: true, salt: 'saltstringsaltst' })
    assert.deepEqual(parseShaCryptSetting('$6$abc$xyz'), { id: '6', rounds: 5000, explicitRounds: false, salt: 'abc' })
  })

  it('reads other schemes and rounds outside 1000-999999999 as no SHA-crypt setting', () => {
    for (const text of ['$1$abc$xyz', '$2y$10$abcdefghijklmnopqrstuv', '$apr1$abc$xyz', 'plain', '$5$rounds=999$abc$xyz', '$y$j9T$abc$xyz']) {
      assert.equal(parseShaCryptSetting(text), null, text)
    }
  })
})
