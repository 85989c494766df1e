import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jaasOption } from '../../../src/kafka/jaas.ts'

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
