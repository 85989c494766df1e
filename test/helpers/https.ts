/**
 * HTTPS for tests of kmirror's endpoint: a self-signed certificate made by openssl, a basic-auth file made with
 * `openssl passwd -5` (as docs/operations.md tells operators), and a GET that trusts only that certificate.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Cleanup } from './kafka.ts'

export interface TlsFiles {
  readonly dir: string
  readonly cert: string
  readonly key: string
}

/** A fresh self-signed certificate for 127.0.0.1 and localhost, and its unencrypted key, in a temp directory. */
export function selfSignedCertificate (t: Cleanup): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'kmirror-tls-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' })
  return { dir, cert, key }
}

/** Writes `user:hash` lines to DIR/users, each hash from `openssl passwd -5`. */
export function authFile (dir: string, users: Readonly<Record<string, string>>): string {
  const file = join(dir, 'users')
  const lines = Object.entries(users).map(([user, password]) =>
    `${user}:${execFileSync('openssl', ['passwd', '-5', '-stdin'], { input: password, encoding: 'utf8' }).trim()}`)
  writeFileSync(file, `# kmirror HTTP users\n${lines.join('\n')}\n`)
  return file
}

export interface HttpsAnswer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

/** GET URL over HTTPS trusting only CA, with basic credentials if given. */
export async function httpsGet (url: string, ca: Buffer, credentials?: { user: string, password: string }): Promise<HttpsAnswer> {
  const headers: Record<string, string> = credentials === undefined
    ? {}
    : { authorization: `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}` }
  return await new Promise((resolve, reject) => {
    const req = request(url, { ca, headers, timeout: 10_000 }, res => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer in 10 s`)))
    req.on('error', reject)
    req.end()
  })
}
