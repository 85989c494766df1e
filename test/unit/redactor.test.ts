import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../src/logger.ts'
import { redactedJson, Redactor, REDACTED, redactWrites, writeJson } from '../../src/redactor.ts'

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

  it('Given short certain secrets right after an escape inside JSON-escaped text (\\n, \\t, \\u0007), then they are hidden too, escaped once or twice', () => {
    const redactor = new Redactor({ certain: ['123456', 'ab'] })
    const once = JSON.stringify({ msg: 'first line\n123456\tab\u0007ab, n123456 tab' })
    assert.equal(redactor.redact(once), `{"msg":"first line\\n${REDACTED}\\t${REDACTED}\\u0007${REDACTED}, n123456 tab"}`)
    assert.equal(redactor.redact(JSON.stringify({ line: once })), JSON.stringify({ line: `{"msg":"first line\\n${REDACTED}\\t${REDACTED}\\u0007${REDACTED}, n123456 tab"}` }))
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

  it('Given a password with a quote, a backslash, a percent sign, a slash and a space, then it hides it raw, JSON-escaped once and twice, and URL-encoded', () => {
    const password = 'p"a\\ss%2F/ w'
    const redactor = new Redactor({ certain: [password] })
    const once = JSON.stringify({ message: `failed with ${password}` })
    const twice = JSON.stringify({ msg: `request ${once}` })
    for (const text of [password, once, twice, `?secret=${encodeURIComponent(password)}&x=1`, new URLSearchParams({ client_secret: password }).toString()]) {
      const redacted = redactor.redact(text)
      assert.ok(!redacted.includes(password) && !redacted.includes('a\\ss') && !redacted.includes('a\\\\ss') && !redacted.includes('ss%252F'), redacted)
      assert.ok(redacted.includes(REDACTED), redacted)
    }
    assert.equal(redactor.redact(twice), JSON.stringify({ msg: `request ${JSON.stringify({ message: `failed with ${REDACTED}` })}` }))
  })

  it('redacts the strings of a value before it is serialized, keeping numbers, flags and the structure', () => {
    const redactor = new Redactor({ certain: ['123456', 'p"w\\1'] })
    const value = { error: 'bad password 123456', offset: 123456, ok: true, nested: [{ 'key 123456': JSON.stringify({ pw: 'p"w\\1' }) }], at: new Date(0) }
    assert.deepEqual(redactor.redactValue(value), { error: `bad password ${REDACTED}`, offset: 123456, ok: true, nested: [{ [`key ${REDACTED}`]: JSON.stringify({ pw: REDACTED }) }], at: new Date(0) })
    // The serialized document keeps its numbers: only long secrets are searched in it again
    assert.equal(redactor.redactSerialized(JSON.stringify({ offset: 123456 })), '{"offset":123456}')
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

describe('writeJson (--json output)', () => {
  it('Given a numeric secret equal to an offset, when a document is written as JSON to a redacting stream, then it stays valid JSON with the offset intact and the secret hidden in its strings', () => {
    const written: string[] = []
    const stream = { write: (chunk: string) => { written.push(chunk); return true } } as unknown as NodeJS.WriteStream
    const redactor = new Redactor({ certain: ['3600', 'long-s3cret-value'] })
    redactWrites(stream, redactor)
    class Position { readonly offset = 3600; readonly note = 'at 3600' }
    const document = { flows: [{ offset: 3600, lag: [3600, 1], error: 'refused password 3600 and long-s3cret-value', at: new Position(), '3600': true }] }
    writeJson(stream, document, redactor)
    // Text written the ordinary way is still searched for the secret as a whole token
    stream.write('offset 3600\n')
    assert.equal(written.length, 2)
    assert.ok(written[0]?.endsWith('}\n'))
    assert.deepEqual(JSON.parse(written[0] ?? ''), {
      flows: [{ offset: 3600, lag: [3600, 1], error: `refused password ${REDACTED} and ${REDACTED}`, at: { offset: 3600, note: `at ${REDACTED}` }, [REDACTED]: true }]
    })
    assert.equal(written[1], `offset ${REDACTED}\n`)
  })

  it('writes to a stream that does not redact, and indents like JSON.stringify with two spaces', () => {
    const written: string[] = []
    const stream = { write: (chunk: string) => { written.push(chunk); return true } } as unknown as NodeJS.WriteStream
    writeJson(stream, { a: [1] }, new Redactor())
    assert.deepEqual(written, [`${JSON.stringify({ a: [1] }, null, 2)}\n`])
    assert.equal(redactedJson(undefined, new Redactor()), 'null')
  })
})

describe('createLogger', () => {
  it('says each message of a logged error once: a cause whose message the message already holds keeps its code and frames only', () => {
    const lines: string[] = []
    const log = createLogger('info', new Redactor({ certain: [] }), { write: (line: string) => { lines.push(line) } })
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
    const inner = new Error('check the brokers of cluster A (127.0.0.1:1): nothing accepts connections there (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1)', { cause: root })
    log.error({ err: new Error(`flow A->B could not start: ${inner.message}`, { cause: inner }) }, 'start failed')
    const line = JSON.parse(lines[0]!) as { msg: string, err: { message: string, stack: string, cause: { message?: string, stack: string, cause: { message?: string, code: string, stack: string } } } }
    assert.equal(line.err.message, `flow A->B could not start: ${inner.message}`)
    assert.equal(line.err.cause.message, undefined)
    assert.equal(line.err.cause.cause.message, undefined)
    assert.equal(line.err.cause.cause.code, 'ECONNREFUSED')
    assert.match(line.err.stack, /^Error: flow A->B could not start: /)
    for (const stack of [line.err.cause.stack, line.err.cause.cause.stack]) assert.match(stack, /^ {4}at /)
    // In the message and the first line of its stack, nowhere else
    assert.equal(lines[0]!.split('nothing accepts connections there').length - 1, 2, lines[0])
  })

  it('keeps a cause message that adds something', () => {
    const lines: string[] = []
    const log = createLogger('info', new Redactor({ certain: [] }), { write: (line: string) => { lines.push(line) } })
    log.error({ err: new Error('outer', { cause: new Error('inner detail') }) }, 'failed')
    const line = JSON.parse(lines[0]!) as { err: { cause: { message: string } } }
    assert.equal(line.err.cause.message, 'inner detail')
  })

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

  it('Given passwords with quotes, backslashes and short numeric ones, when messages quote them as JSON, then no log line shows them and every line stays JSON', () => {
    const lines: string[] = []
    const password = 'q"uo\\te d%2F/pw'
    const log = createLogger('info', new Redactor({ certain: [password, '4242'] }), { write: (line: string) => { lines.push(line) } })
    const request = JSON.stringify({ user: 'alice', password })
    log.error({ err: new Error(`authentication failed for ${request}`, { cause: new Error(`sent ${JSON.stringify(request)}`) }) }, `failed: ${request}`)
    log.child({ flow: 'A->B', user: `alice:${password}` }).warn({ detail: { password, note: 'pin 4242' }, offset: 4242 }, 'pin 4242 refused')
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>
      const all = JSON.stringify(parsed)
      for (const secret of [password, 'uo\\te', 'uo\\\\te', 'uo\\\\\\\\te', 'pin 4242', '"4242"']) assert.ok(!line.includes(secret) && !all.includes(secret), `${secret} in ${line}`)
    }
    const warned = JSON.parse(lines[1] ?? '') as Record<string, unknown>
    assert.equal(warned.offset, 4242)
    assert.equal(warned.user, `alice:${REDACTED}`)
    assert.deepEqual(warned.detail, { password: REDACTED, note: `pin ${REDACTED}` })
    assert.equal(warned.msg, `pin ${REDACTED} refused`)
  })

  it('Given a short numeric secret, when it is in a logged error\'s message, its cause\'s and aggregated errors\' messages and in child and grandchild bindings, then no line shows it and numbers of the line stay', () => {
    const lines: string[] = []
    const log = createLogger('info', new Redactor({ certain: ['123456'] }), { write: (line: string) => { lines.push(line) } })
    const cause = new AggregateError([new Error('attempt with 123456')], 'inner 123456 refused')
    log.child({ flow: 'A->B', user: 'alice:123456' }).child({ job: 'pin 123456' }).error({ err: new Error('outer 123456 refused', { cause }), offset: 123456 }, 'failed')
    log.error(new Error('direct 123456'))
    assert.equal(lines.length, 2)
    for (const line of lines) assert.ok(!/(?<![\w-])123456(?![\w-])/.test(line.replaceAll('"offset":123456', '')), line)
    const [first, second] = lines.map(line => JSON.parse(line) as Record<string, unknown>)
    assert.equal(first?.user, `alice:${REDACTED}`)
    assert.equal(first?.job, `pin ${REDACTED}`)
    assert.equal(first?.offset, 123456)
    const err = first?.err as { message: string, stack: string, cause: { message: string, stack: string, aggregateErrors: { message: string }[] } }
    assert.equal(err.message, `outer ${REDACTED} refused`)
    assert.match(err.stack, /^Error: outer \[redacted\] refused\n/)
    assert.equal(err.cause.message, `inner ${REDACTED} refused`)
    assert.match(err.cause.stack, /^AggregateError: inner \[redacted\] refused\n/)
    assert.equal(err.cause.aggregateErrors[0]?.message, `attempt with ${REDACTED}`)
    assert.equal(second?.msg, `direct ${REDACTED}`)
    assert.equal((second?.err as { message: string }).message, `direct ${REDACTED}`)
  })
})
