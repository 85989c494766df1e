import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../src/logger.ts'
import { Redactor, REDACTED, redactWrites } from '../../src/redactor.ts'

describe('Redactor', () => {
  it('replaces every occurrence of every secret, longest first, in any text', () => {
    const redactor = new Redactor({ certain: ['hunter2-secret', 'hunter2-secret-and-more'], guessed: ['p@ss'] })
    assert.equal(redactor.redact('a hunter2-secret-and-more b hunter2-secret c p@ss p@ss'), `a ${REDACTED} b ${REDACTED} c ${REDACTED} ${REDACTED}`)
  })

  it('treats secrets as plain text, not as patterns', () => {
    const redactor = new Redactor({ certain: ['a.b*c(d)$1'] })
    assert.equal(redactor.redact('x a.b*c(d)$1 y axbbbcd'), `x ${REDACTED} y axbbbcd`)
  })

  it('also finds a secret trimmed and as escaped inside JSON', () => {
    const redactor = new Redactor({ certain: ['  pa"ss\\word\n '] })
    assert.equal(redactor.redact(JSON.stringify({ message: 'failed with pa"ss\\word\n ' })), `{"message":"failed with ${REDACTED}\\n "}`)
    assert.equal(redactor.redact('password pa"ss\\word'), `password ${REDACTED}`)
  })

  it('finds long secrets inside other text', () => {
    const redactor = new Redactor({ certain: ['s3cr3t-value'], guessed: ['tok-en-long'] })
    assert.equal(redactor.redact('xs3cr3t-valuex_tok-en-long9'), `x${REDACTED}x_${REDACTED}9`)
  })

  it('Given certain secrets that are short or numeric, then it hides them where they stand as whole tokens only', () => {
    // keytool's example password, a short one, and a value that looks like a flag
    const redactor = new Redactor({ certain: ['123456', 'ab', 'true', '7'] })
    assert.equal(redactor.redact('keystore password 123456, "ab" (ab) ab.'), `keystore password ${REDACTED}, "${REDACTED}" (${REDACTED}) ${REDACTED}.`)
    assert.equal(redactor.redact('offset 1234567 -123456 123456_x about tab ab-c abc x7 7x'), 'offset 1234567 -123456 123456_x about tab ab-c abc x7 7x')
    assert.equal(redactor.redact('enabled=true; partition 7'), `enabled=${REDACTED}; partition ${REDACTED}`)
  })

  it('Given guessed secrets that are short, numeric or booleans, then it leaves them alone, so offsets and flags stay readable', () => {
    const redactor = new Redactor({ guessed: ['abc', '30000', 'true', '-1', ''] })
    assert.equal(redactor.size, 0)
    assert.equal(redactor.redact('{"timeoutMs":30000,"ok":true,"abc":-1}'), '{"timeoutMs":30000,"ok":true,"abc":-1}')
  })

  it('never searches for an empty or blank value, even a certain one', () => {
    const redactor = new Redactor({ certain: ['', '  ', '\n'] })
    assert.equal(redactor.size, 0)
    assert.equal(redactor.redact('a b\n'), 'a b\n')
  })

  it('learns secrets added later', () => {
    const redactor = new Redactor()
    assert.equal(redactor.redact('s3cr3t-value 42'), 's3cr3t-value 42')
    redactor.add({ certain: ['s3cr3t-value', '42'] })
    assert.equal(redactor.redact('s3cr3t-value 42'), `${REDACTED} ${REDACTED}`)
  })
})

describe('redactWrites', () => {
  it('redacts strings and UTF-8 bytes written to a stream, and passes other arguments on', () => {
    const written: unknown[][] = []
    const stream = { write: (...args: unknown[]) => { written.push(args); return true } } as unknown as NodeJS.WriteStream
    redactWrites(stream, new Redactor({ certain: ['s3cr3t-value'] }))
    const callback = (): void => {}
    stream.write('a s3cr3t-value b\n', callback)
    stream.write(Buffer.from('é s3cr3t-value'))
    stream.write(Buffer.from([0xff, 0x00]))
    assert.deepEqual(written, [[`a ${REDACTED} b\n`, callback], [Buffer.from(`é ${REDACTED}`)], [Buffer.from([0xff, 0x00])]])
  })
})

describe('createLogger', () => {
  it('redacts every log line, including messages and causes of logged errors', () => {
    const lines: string[] = []
    const redactor = new Redactor({ certain: ['s3cr3t-value'] })
    const log = createLogger('info', redactor, { write: (line: string) => { lines.push(line) } })
    log.warn({ key: 'A.sasl.jaas.confg', value: 'x s3cr3t-value' }, 'bad s3cr3t-value')
    log.error({ err: new Error('outer', { cause: new Error('inner "s3cr3t-value"') }) }, 'failed')
    assert.equal(lines.length, 2)
    for (const line of lines) {
      assert.ok(!line.includes('s3cr3t-value'), line)
      JSON.parse(line)
    }
    assert.match(lines[0] ?? '', /"msg":"bad \[redacted\]"/)
  })
})
