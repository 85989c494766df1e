/**
 * Errors nobody catches (a bug), as users meet them: kmirror as a child process, the error injected by
 * test/fakes/crash-preload.ts. No Kafka needed: `run` talks to a TCP server that accepts and never answers.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { describeUnexpectedError } from '../../../src/cli/unexpected-errors.ts'
import { Redactor } from '../../../src/redactor.ts'

const ROOT = join(import.meta.dirname, '..', '..', '..')
const MAIN = join(ROOT, 'src', 'cli', 'main.ts')
const PRELOAD = join(ROOT, 'test', 'fakes', 'crash-preload.ts')
const dir = mkdtempSync(join(tmpdir(), 'kmirror-crash-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const SECRET = 'uncaught-s3cret-pw'
/** keytool's example password: short and numeric, still a secret. */
const NUMERIC_SECRET = '123456'
const JAAS = (password: string): string => `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`

function configFile (bootstrap: string): string {
  const file = join(dir, `mm2-${Math.random().toString(36).slice(2)}.properties`)
  writeFileSync(file, [
    'clusters = A, B', `A.bootstrap.servers = ${bootstrap}`, `B.bootstrap.servers = ${bootstrap}`, 'A->B.enabled = true',
    'emit.heartbeats.enabled = false', `A.sasl.jaas.config = ${JAAS(SECRET)}`, `B.sasl.jaas.config = ${JAAS(NUMERIC_SECRET)}`
  ].join('\n'))
  return file
}

function crashEnv (as: 'throw' | 'reject', on: 'handlers' | 'SIGUSR2'): NodeJS.ProcessEnv {
  return { ...process.env, KMIRROR_TEST_CRASH_MESSAGE: `boom with password ${SECRET} and ${NUMERIC_SECRET}`, KMIRROR_TEST_CRASH_AS: as, KMIRROR_TEST_CRASH_ON: on }
}

function assertReported (output: string): void {
  assert.match(output, /kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): Error: boom with password \[redacted\] and \[redacted\]\n/)
  assert.match(output, /caused by: Error: inner boom with password \[redacted\] and \[redacted\]\n/)
  for (const secret of [SECRET, NUMERIC_SECRET]) assert.ok(!output.includes(secret), `${secret} was printed:\n${output}`)
}

describe('an error nobody catches', () => {
  it('Given a loaded configuration, when an exception escapes, then kmirror reports it as internal, redacted, and exits 4', () => {
    const result = spawnSync(process.execPath, ['--import', PRELOAD, MAIN, 'validate', configFile('127.0.0.1:9')], {
      encoding: 'utf8', env: crashEnv('throw', 'handlers'), timeout: 30_000
    })
    const output = `${result.stdout}\n${result.stderr}`
    assert.equal(result.status, 4, output)
    assertReported(output)
  })

  it('Given `run` still starting, when a promise rejection goes unhandled, then it is reported the same way and the exit code is 3', async t => {
    // A "broker" that accepts connections and never answers: the start cannot finish
    const sockets: Socket[] = []
    const server: Server = createServer(socket => { sockets.push(socket) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.after(() => { for (const socket of sockets) socket.destroy(); server.close() })
    const address = server.address()
    assert.ok(typeof address === 'object' && address !== null)

    const child = spawn(process.execPath, ['--import', PRELOAD, MAIN, 'run', configFile(`127.0.0.1:${address.port}`)], {
      env: crashEnv('reject', 'SIGUSR2'), stdio: ['ignore', 'pipe', 'pipe']
    })
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    const exited = new Promise<number | null>(resolve => child.once('close', code => resolve(code)))
    // When kmirror connects to the broker (it is starting), the rejection happens
    server.once('connection', () => child.kill('SIGUSR2'))

    assert.equal(await exited, 3, output)
    assertReported(output)
  })
})

describe('describeUnexpectedError', () => {
  it('Given a rejection that is no Error, holding a long secret with quotes of every kind and a newline, then the printed text does not show it', () => {
    // inspect quotes such a string with \' escapes, which no search form of the secret matches
    const secret = 'it\'s "my" `long`\npassword'
    const redactor = new Redactor({ certain: [secret, '123456'] })
    for (const reason of [{ login: { password: secret, pin: '123456' } }, secret, [secret]]) {
      const printed = redactor.redact(describeUnexpectedError(reason, redactor))
      assert.match(printed, /^kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): /)
      for (const part of ['"my"', '`long`', 'it\'s', 'it\\\'s', '123456']) assert.ok(!printed.includes(part), `${part} in ${printed}`)
      assert.ok(printed.includes('[redacted]'), printed)
    }
    const cause = redactor.redact(describeUnexpectedError(new Error('outer', { cause: { detail: secret } }), redactor))
    assert.match(cause, /\ncaused by: \{ detail: '\[redacted\]' \}$/)
  })
})
