import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../src/logger.ts'
import { Redactor, REDACTED, redactWrites } from '../../src/redactor.ts'

describe('Redactor', () => {
  it('replaces every occurrence of every secret, longest first, in any text', () => {
    const redactor = new Redactor(['hunter2-secret', 'hunter2-secret-and-more', 'p@ss'])
    assert.equal(redactor.redact('a hunter2-secret-and-more b hunter2-secret c p@ss p@ss'), `a ${REDACTED} b ${REDACTED} c ${REDACTED} ${REDACTED}`)
  })

  it('treats secrets as plain text, not as patterns', () => {
    const redactor = new Redactor(['a.b*c(d)$1'])
    assert.equal(redactor.redact('x a.b*c(d)$1 y axbbbcd'), `x ${REDACTED} y axbbbcd`)
  })

  it('also finds a secret trimmed and as escaped inside JSON', () => {
    const redactor = new Redactor(['  pa"ss\\word\n '])
    assert.equal(redactor.redact(JSON.stringify({ message: 'failed with pa"ss\\word\n ' })), `{"message":"failed with ${REDACTED}\\n "}`)
    assert.equal(redactor.redact('password pa"ss\\word'), `password ${REDACTED}`)
  })

  it('leaves short values, plain numbers and booleans alone, so offsets and flags stay readable', () => {
    const redactor = new Redactor(['abc', '30000', 'true', '-1', ''])
    assert.equal(redactor.size, 0)
    assert.equal(redactor.redact('{"timeoutMs":30000,"ok":true,"abc":-1}'), '{"timeoutMs":30000,"ok":true,"abc":-1}')
  })

  it('learns secrets added later', () => {
    const redactor = new Redactor()
    assert.equal(redactor.redact('s3cr3t-value'), 's3cr3t-value')
    redactor.add(['s3cr3t-value'])
    assert.equal(redactor.redact('s3cr3t-value'), REDACTED)
  })
})

describe('redactWrites', () => {
  it('redacts strings and UTF-8 bytes written to a stream, and passes other arguments on', () => {
    const written: unknown[][] = []
    const stream = { write: (...args: unknown[]) => { written.push(args); return true } } as unknown as NodeJS.WriteStream
    redactWrites(stream, new Redactor(['s3cr3t-value']))
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
    const redactor = new Redactor(['s3cr3t-value'])
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
