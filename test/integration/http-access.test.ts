/**
 * The HTTP endpoint over TLS and behind basic authentication (`--http-tls-cert`, `--http-tls-key`,
 * `--http-auth-file`), and those flags checked before any cluster is contacted.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { authFile, httpsGet, type HttpsAnswer, selfSignedCertificate } from '../helpers/https.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PASSWORD = 'Tr0ub4dor&3 :colon'

test('every path answers 401 without the right credentials and 200 with them, over HTTPS only', { timeout: 120_000 }, async t => {
  // Given 30 records to copy, and kmirror serving HTTPS with a self-signed certificate behind an auth file
  const topic = uniqueName('http-access')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', Array.from({ length: 30 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const tls = selfSignedCertificate(t)
  const users = authFile(tls.dir, { alice: PASSWORD, bob: 'another one' })
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1', '--http-tls-cert', tls.cert, '--http-tls-key', tls.key, '--http-auth-file', users], { t })
  const match = await kmirror.waitForOutput(/"port":(\d+),"tls":true,"basicAuth":true[^\n]*HTTP endpoint/, 30_000)
  const base = `https://127.0.0.1:${match[1]}`
  const ca = readFileSync(tls.cert)
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [0n]))[0] === 30n, { timeoutMs: 60_000, message: '30 records copied' })

  // When each path is asked without credentials, with a wrong password, another user's password or an unknown user
  // (past 10 unverified headers a second the endpoint answers 429 without hashing: asked again after it)
  const paths = ['/metrics', '/status', '/healthz', '/livez', '/readyz', '/', '/console/console.js', '/status?summary', '/topology']
  for (const path of paths) {
    for (const credentials of [undefined, { user: 'alice', password: 'wrong' }, { user: 'alice', password: 'another one' }, { user: 'carol', password: PASSWORD }]) {
      const answer = await getPastThrottle(`${base}${path}`, ca, credentials)
      // Then it is refused, with the challenge and nothing of the endpoint's data
      assert.equal(answer.status, 401, `${path} as ${credentials?.user ?? 'nobody'}`)
      assert.equal(answer.headers['www-authenticate'], 'Basic realm="kmirror", charset="UTF-8"')
      assert.doesNotMatch(answer.body, /kmirror_records|"flows"|^ok/)
    }
  }

  // When asked with alice's or bob's credentials, Then every path answers (the page at / is the web console's)
  const alice = { user: 'alice', password: PASSWORD }
  await waitFor(async () => (await httpsGet(`${base}/metrics`, ca, alice)).body.includes(`kmirror_records_copied_total{flow="A->B",topic="${topic}"} 30`),
    { timeoutMs: 20_000, message: '/metrics shows 30 records copied' })
  assert.equal((await httpsGet(`${base}/healthz`, ca, alice)).status, 200)
  // (bob's header is not verified yet: asked in the same second as the refusals above, it may be throttled first)
  assert.equal((await getPastThrottle(`${base}/readyz`, ca, { user: 'bob', password: 'another one' })).status, 200)
  const status = await httpsGet(`${base}/status`, ca, alice)
  assert.equal(status.status, 200)
  assert.equal((JSON.parse(status.body) as { flows: { name: string }[] }).flows[0]?.name, 'A->B')
  const page = await httpsGet(`${base}/`, ca, alice)
  assert.equal(page.status, 200)
  assert.match(page.body, /<title>kmirror<\/title>[\s\S]*<script type="module" src="\/console\/console\.js">/)
  const script = await httpsGet(`${base}/console/console.js`, ca, alice)
  assert.equal(script.status, 200)
  assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8')

  // And plain HTTP on that port gets no answer from the endpoint
  await assert.rejects(new Promise((resolve, reject) => get(`http://127.0.0.1:${match[1]}/healthz`, resolve).on('error', reject)))

  // And neither the password nor its hash was printed
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
  const hash = readFileSync(users, 'utf8').split('\n').find(l => l.startsWith('alice:'))!.slice('alice:'.length)
  for (const secret of [PASSWORD, hash, Buffer.from(`alice:${PASSWORD}`).toString('base64')]) {
    assert.ok(!kmirror.stdout.includes(secret) && !kmirror.stderr.includes(secret), 'a credential was printed')
  }
})

/** GET URL, asked again while the endpoint answers 429 (more than 10 unverified headers this second). */
async function getPastThrottle (url: string, ca: Buffer, credentials?: { user: string, password: string }): Promise<HttpsAnswer> {
  let answer = await httpsGet(url, ca, credentials)
  await waitFor(async () => {
    if (answer.status !== 429) return true
    assert.equal(answer.headers['retry-after'], '1')
    answer = await httpsGet(url, ca, credentials)
    return answer.status !== 429
  }, { timeoutMs: 10_000, message: `${url} answered past the throttle` })
  return answer
}

test('a wrong TLS or auth flag exits 2 naming the flag, before any cluster is contacted', { timeout: 120_000 }, async t => {
  // Given a configuration whose clusters are closed ports (contacting one would end in exit 3, not 2)
  const tls = selfSignedCertificate(t)
  const other = selfSignedCertificate(t)
  const config = writeTempFile(['clusters = A, B', 'A.bootstrap.servers = 127.0.0.1:1', 'B.bootstrap.servers = 127.0.0.1:2', 'A->B.enabled = true', ''].join('\n'), '.properties', t)
  const garbage = join(tls.dir, 'garbage.pem')
  writeFileSync(garbage, 'not a pem file\n')
  const badUsers = join(tls.dir, 'bad-users')
  writeFileSync(badUsers, `alice:${execFileSync('openssl', ['passwd', '-1', '-stdin'], { input: 'pw', encoding: 'utf8' }).trim()}\n`)
  const http = ['--http-port', '0', '--http-host', '127.0.0.1']
  const cases: readonly (readonly [string[], RegExp])[] = [
    [['--http-tls-cert', tls.cert, '--http-tls-key', tls.key], /--http-tls-cert and --http-tls-key need --http-port/],
    [[...http, '--http-tls-cert', tls.cert], /--http-tls-cert needs --http-tls-key too/],
    [[...http, '--http-tls-cert', join(tls.dir, 'missing.pem'), '--http-tls-key', tls.key], /--http-tls-cert \S+missing\.pem: cannot read it \(ENOENT\)/],
    [[...http, '--http-tls-cert', tls.cert, '--http-tls-key', garbage], /--http-tls-key \S+garbage\.pem: not an unencrypted PEM private key/],
    [[...http, '--http-tls-cert', tls.cert, '--http-tls-key', other.key], /--http-tls-key \S+ is not the private key of the certificate in --http-tls-cert/],
    [[...http, '--http-auth-file', join(tls.dir, 'nobody')], /--http-auth-file \S+nobody: cannot read it \(ENOENT\)/],
    [[...http, '--http-auth-file', badUsers], /--http-auth-file \S+bad-users line 1: the hash of user "alice" is not SHA-256-crypt or SHA-512-crypt.*openssl passwd -5/]
  ]
  // When kmirror runs with each wrong flag, Then it exits 2 with a message naming the flag and nothing else
  for (const [flags, message] of cases) {
    const kmirror = spawnKmirror(['run', config, ...flags], { t })
    const exit = await kmirror.waitForExit(20_000)
    assert.equal(exit.code, 2, `${flags.join(' ')}\n${kmirror.stderr}`)
    assert.match(kmirror.stderr, message)
    assert.doesNotMatch(kmirror.stderr, /ECONNREFUSED|127\.0\.0\.1:1\b/)
    for (const keyLine of [...readFileSync(tls.key, 'utf8').split('\n'), ...readFileSync(other.key, 'utf8').split('\n')].filter(l => l.length > 40)) {
      assert.ok(!kmirror.stderr.includes(keyLine), 'a private key was printed')
    }
  }
})
