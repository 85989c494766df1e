/**
 * Who may reach kmirror's HTTP endpoint and how: `--http-tls-cert` and `--http-tls-key` (PEM files) make it HTTPS,
 * `--http-auth-file` puts every path behind basic authentication (basic-auth.ts). Everything is read and checked
 * at start, before any cluster is contacted: a problem is a message naming the flag (exit 2). The key's content
 * is never printed.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import { BasicAuthenticator, parseAuthFile, withBasicAuth } from './basic-auth.ts'

export interface HttpAccessFlags {
  readonly tlsCert?: string | undefined
  readonly tlsKey?: string | undefined
  readonly authFile?: string | undefined
}

export interface HttpAccess {
  readonly tls: { readonly cert: Buffer, readonly key: Buffer } | undefined
  readonly authenticator: BasicAuthenticator | undefined
}

export const OPEN_ACCESS: HttpAccess = Object.freeze({ tls: undefined, authenticator: undefined })

export type HttpAccessResult = { ok: true, value: HttpAccess } | { ok: false, message: string }

/** Reads and checks the files the flags name; every problem names its flag and how to fix it. */
export function loadHttpAccess (flags: HttpAccessFlags): HttpAccessResult {
  try {
    return { ok: true, value: { tls: loadTls(flags), authenticator: loadAuthenticator(flags.authFile) } }
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) }
  }
}

function readFlagFile (flag: string, path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable'
    throw new Error(`${flag} ${path}: cannot read it (${code}): give a file kmirror's user can read`, { cause: err })
  }
}

function loadTls ({ tlsCert, tlsKey }: HttpAccessFlags): HttpAccess['tls'] {
  if (tlsCert === undefined && tlsKey === undefined) return undefined
  if (tlsCert === undefined || tlsKey === undefined) {
    throw new Error(`${tlsCert === undefined ? '--http-tls-key' : '--http-tls-cert'} needs ${tlsCert === undefined ? '--http-tls-cert' : '--http-tls-key'} too: HTTPS takes a certificate and its private key (PEM files)`)
  }
  const cert = readFlagFile('--http-tls-cert', tlsCert)
  const key = readFlagFile('--http-tls-key', tlsKey)
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(cert)
  } catch (err) {
    throw new Error(`--http-tls-cert ${tlsCert}: not a PEM certificate (${describe(err)}): give the server certificate, "-----BEGIN CERTIFICATE-----" first, its chain after it`, { cause: err })
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key)
  } catch (err) {
    throw new Error(`--http-tls-key ${tlsKey}: not an unencrypted PEM private key (${describe(err)}): an encrypted key can be decrypted with \`openssl pkey -in KEY -out PLAIN\``, { cause: err })
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new Error(`--http-tls-key ${tlsKey} is not the private key of the certificate in --http-tls-cert ${tlsCert}: give the key the certificate was issued for`)
  }
  return { cert, key }
}

function loadAuthenticator (file: string | undefined): BasicAuthenticator | undefined {
  if (file === undefined) return undefined
  const text = readFlagFile('--http-auth-file', file).toString('utf8')
  try {
    return new BasicAuthenticator(parseAuthFile(text, file))
  } catch (err) {
    throw new Error(`--http-auth-file ${describe(err)}`, { cause: err })
  }
}

function describe (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** An HTTP or HTTPS server for HANDLER, behind basic authentication when ACCESS asks for it. */
export function createAccessServer (access: HttpAccess, handler: (req: IncomingMessage, res: ServerResponse) => void): Server | HttpsServer {
  const guarded = access.authenticator === undefined ? handler : withBasicAuth(access.authenticator, handler)
  return access.tls === undefined ? createHttpServer(guarded) : createHttpsServer({ cert: access.tls.cert, key: access.tls.key }, guarded)
}
