import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jsonLineToText } from '../../src/log-format.ts'
import { createLogger } from '../../src/logger.ts'
import { Redactor } from '../../src/redactor.ts'

function capture (format: 'json' | 'text', redactor = new Redactor({ certain: [] })): { lines: string[], log: ReturnType<typeof createLogger> } {
  const lines: string[] = []
  return { lines, log: createLogger('debug', redactor, { write: (line: string) => { lines.push(line) } }, format) }
}

describe('log lines', () => {
  it('Given the JSON format, then each line names its level and carries an ISO-8601 UTC time', () => {
    const { lines, log } = capture('json')
    log.info('flow started')
    log.child({ flow: 'A->B' }).warn({ topic: 'orders' }, 'lagging')
    const [info, warn] = lines.map(l => JSON.parse(l) as { level: string, time: string, flow?: string })
    assert.equal(info!.level, 'info')
    assert.equal(warn!.level, 'warn')
    assert.equal(warn!.flow, 'A->B')
    assert.match(info!.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    assert.ok(Math.abs(Date.parse(info!.time) - Date.now()) < 5000)
  })

  it('Given the text format, then one readable line per entry: time, level, flow and job, message, fields, the error on the same line', () => {
    const { lines, log } = capture('text')
    const err = Object.assign(new Error('request timed out', { cause: new Error('socket hang up') }), { code: 'KMIRROR_ERR_TIMEOUT' })
    log.child({ flow: 'A->B' }).child({ job: 'refresh-topics' }).warn({ attempt: 2, topic: 'my orders', err }, 'cannot list topics on cluster A')
    assert.equal(lines.length, 1)
    assert.match(lines[0]!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z WARN {2}\[A->B refresh-topics\] cannot list topics on cluster A attempt=2 topic="my orders" err="KMIRROR_ERR_TIMEOUT: request timed out \(cause: socket hang up\)"\n$/)
  })

  it('Given a secret in a message, a field and an error, then the text line shows none of them', () => {
    const { lines, log } = capture('text', new Redactor({ certain: ['s3cr3t-pw'] }))
    log.error({ password: 's3cr3t-pw', err: new Error('login with "s3cr3t-pw" refused') }, 'bad s3cr3t-pw')
    assert.equal(lines.length, 1)
    assert.ok(!lines[0]!.includes('s3cr3t-pw'), lines[0])
    assert.match(lines[0]!, /ERROR bad \[redacted\] password=\[redacted\]/)
  })

  it('keeps a line that is not JSON as it is', () => {
    assert.equal(jsonLineToText('plain\n'), 'plain\n')
  })
})
