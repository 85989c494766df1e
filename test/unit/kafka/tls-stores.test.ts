import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { createHash, X509Certificate } from 'node:crypto'
import { createSecureContext } from 'node:tls'
import { ClientConfigError } from '../../../src/kafka/client-config-error.ts'
import { loadTlsMaterial } from '../../../src/kafka/tls-stores.ts'

const FIXTURES = resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls')
const at = (name: string): string => join(FIXTURES, name)
const CA_SUBJECT = new X509Certificate(readFileSync(at('ca.pem'))).subject
const CLIENT_SUBJECT = new X509Certificate(readFileSync(at('client-chain.pem'))).subject
const OTHER_CA_SUBJECT = new X509Certificate(readFileSync(at('other-ca.pem'))).subject
const SECRETS = ['client-store-secret', 'client-key-secret', 'trust-secret', 'wrong-password']

/** Asserts a ClientConfigError naming `key` whose message matches `pattern` and holds no password. */
function storeError (props: Record<string, string>, key: string, pattern: RegExp): void {
  let caught: unknown
  assert.throws(() => loadTlsMaterial(props), (err: unknown) => { caught = err; return true })
  assert.ok(caught instanceof ClientConfigError, String(caught))
  assert.equal(caught.key, key, caught.message)
  assert.match(caught.message, pattern)
  for (const secret of SECRETS) assert.equal(caught.message.includes(secret), false, `message shows ${secret}: ${caught.message}`)
}

function subjectsOf (pems: readonly string[] | undefined): string[] {
  return (pems ?? []).map(pem => new X509Certificate(pem).subject)
}

describe('loadTlsMaterial: truststores', () => {
  it('reads the CA from JKS and PKCS12 truststores, with or without the JKS default type, and from PEM', () => {
    const cases: Record<string, string>[] = [
      { 'ssl.truststore.location': at('truststore.jks'), 'ssl.truststore.password': 'trust-secret' },
      { 'ssl.truststore.location': at('truststore.p12'), 'ssl.truststore.password': 'trust-secret' },
      { 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': at('truststore.jks'), 'ssl.truststore.password': 'trust-secret' },
      { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': at('ca.pem') },
      { 'ssl.truststore.type': 'pem', 'ssl.truststore.certificates': readFileSync(at('ca.pem'), 'utf8') }
    ]
    for (const props of cases) assert.deepEqual(subjectsOf(loadTlsMaterial(props).ca), [CA_SUBJECT], JSON.stringify(props))
  })

  it('reads a JKS truststore without its password, skipping the integrity check as Java does', () => {
    assert.deepEqual(subjectsOf(loadTlsMaterial({ 'ssl.truststore.location': at('truststore.jks') }).ca), [CA_SUBJECT])
  })

  it('reads inline certificates written with backslash continuations, joined into one line by the properties reader', () => {
    const [head, ...body] = readFileSync(at('ca.pem'), 'utf8').trim().split('\n')
    const end = body.pop() ?? ''
    // `key = -----BEGIN CERTIFICATE----- \` + `    MIID... \` lines: Java keeps the blank before each backslash.
    const joined = [head, ...body, end].join(' ')
    assert.deepEqual(subjectsOf(loadTlsMaterial({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': joined }).ca), [CA_SUBJECT])
    const noBlanks = [head, ...body, end].join('')
    assert.deepEqual(subjectsOf(loadTlsMaterial({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': noBlanks }).ca), [CA_SUBJECT])
  })

  it('names the password when it does not open the store, and never prints it', () => {
    storeError({ 'ssl.truststore.location': at('truststore.jks'), 'ssl.truststore.password': 'wrong-password' }, 'ssl.truststore.password', /does not open ssl\.truststore\.location = .*truststore\.jks \(the store's integrity check failed\): check the password/)
    storeError({ 'ssl.truststore.location': at('truststore.p12'), 'ssl.truststore.password': 'wrong-password' }, 'ssl.truststore.password', /does not open/)
    storeError({ 'ssl.truststore.location': at('truststore.p12') }, 'ssl.truststore.password', /is not set, and ssl\.truststore\.location = .* cannot be read without it/)
  })

  it('trusts in a PKCS12 truststore what Java trusts: certificates marked trusted and the first certificate of each key entry, names or not', () => {
    // keytool: a trusted certificate entry; openssl: a key entry whose chain certificates have no friendlyName
    assert.deepEqual(subjectsOf(loadTlsMaterial({ 'ssl.truststore.location': at('truststore.p12'), 'ssl.truststore.password': 'trust-secret' }).ca), [CA_SUBJECT])
    assert.deepEqual(subjectsOf(loadTlsMaterial({ 'ssl.truststore.location': at('client.p12'), 'ssl.truststore.password': 'client-store-secret' }).ca), [CLIENT_SUBJECT])
    // keytool: a key entry and a trusted certificate entry in one store
    const mixed = subjectsOf(loadTlsMaterial({ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': at('truststore-mixed.p12'), 'ssl.truststore.password': 'trust-secret' }).ca)
    assert.deepEqual(mixed.sort(), [OTHER_CA_SUBJECT, CLIENT_SUBJECT].sort())
  })

  it('refuses a PKCS12 truststore in which Java would trust nothing (openssl -nokeys without -jdktrust), saying how to make one', () => {
    storeError({ 'ssl.truststore.location': at('truststore-unnamed.p12'), 'ssl.truststore.password': 'trust-secret' }, 'ssl.truststore.location',
      /truststore-unnamed\.p12 holds no trusted certificate entry, so Java would trust no broker: .*keytool -importcert.*-jdktrust/)
  })

  it('refuses a JKS truststore without any entry, asking for the brokers\' CA', () => {
    // An empty JKS store: magic, version 2, no entries, and the SHA-1 of password (UTF-16BE), "Mighty Aphrodite", body
    const body = Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 0])
    const password = Buffer.from('trust-secret', 'utf16le').swap16()
    const digest = createHash('sha1').update(password).update('Mighty Aphrodite', 'utf8').update(body).digest()
    const empty = join(mkdtempSync(join(tmpdir(), 'kmirror-tls-')), 'empty.jks')
    writeFileSync(empty, Buffer.concat([body, digest]))
    storeError({ 'ssl.truststore.location': empty, 'ssl.truststore.password': 'trust-secret' }, 'ssl.truststore.location', /empty\.jks holds no certificates: import the CA certificate\(s\) of the brokers$/)
  })

  it('names a damaged JKS file as a store that cannot be read, with the cause', () => {
    const damaged = join(mkdtempSync(join(tmpdir(), 'kmirror-tls-')), 'damaged.jks')
    writeFileSync(damaged, readFileSync(at('truststore.jks')).subarray(0, 20))
    storeError({ 'ssl.truststore.location': damaged }, 'ssl.truststore.location', /damaged\.jks cannot be read as a key store \(.+\): check the file and ssl\.truststore\.type/)
  })

  it('refuses a missing file, a truststore without certificates and PEM text under a binary type', () => {
    storeError({ 'ssl.truststore.location': at('missing.jks') }, 'ssl.truststore.location', /missing\.jks cannot be read \(no such file\)/)
    storeError({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': at('client-key.pem') }, 'ssl.truststore.location', /holds no PEM certificate/)
    storeError({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': 'not a certificate' }, 'ssl.truststore.certificates', /holds no PEM certificate/)
    storeError({ 'ssl.truststore.location': at('ca.pem') }, 'ssl.truststore.type', /holds PEM text: set ssl\.truststore\.type = PEM/)
  })

  it('applies Java\'s rules on combinations: PEM takes no password, inline certificates need type PEM and no location', () => {
    const pem = readFileSync(at('ca.pem'), 'utf8')
    storeError({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': at('ca.pem'), 'ssl.truststore.password': 'x' }, 'ssl.truststore.password', /cannot be used with a PEM truststore/)
    storeError({ 'ssl.truststore.certificates': pem }, 'ssl.truststore.type', /is JKS, but ssl\.truststore\.certificates \(inline PEM\) needs ssl\.truststore\.type = PEM/)
    storeError({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': pem, 'ssl.truststore.location': at('ca.pem') }, 'ssl.truststore.location', /use one of them/)
    storeError({ 'ssl.truststore.password': 'x' }, 'ssl.truststore.location', /is not set, but ssl\.truststore\.password is/)
    storeError({ 'ssl.truststore.type': 'BCFKS', 'ssl.truststore.location': at('ca.pem') }, 'ssl.truststore.type', /kmirror reads JKS, PKCS12 and PEM stores/)
  })

  it('gives no truststore (Node\'s default CAs) when none is configured', () => {
    assert.deepEqual(loadTlsMaterial({}), {})
  })
})

describe('loadTlsMaterial: keystores', () => {
  /** The material works in a TLS context and presents the client certificate. */
  function assertClientIdentity (props: Record<string, string>): void {
    const material = loadTlsMaterial(props)
    assert.doesNotThrow(() => createSecureContext({ ...material, ca: undefined }))
    if (material.cert !== undefined) assert.equal(new X509Certificate(material.cert).subject, CLIENT_SUBJECT)
    else assert.ok(material.pfx !== undefined && material.passphrase === 'client-store-secret')
  }

  it('reads a JKS keystore whose key password differs from the store password (ssl.key.password)', () => {
    assertClientIdentity({ 'ssl.keystore.location': at('client.jks'), 'ssl.keystore.password': 'client-store-secret', 'ssl.key.password': 'client-key-secret' })
  })

  it('reads a PKCS12 keystore, also under the default type JKS, as Java 9+ does', () => {
    assertClientIdentity({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': at('client.p12'), 'ssl.keystore.password': 'client-store-secret' })
    assertClientIdentity({ 'ssl.keystore.location': at('client.p12'), 'ssl.keystore.password': 'client-store-secret' })
  })

  it('reads a legacy PKCS12 keystore (RC2, openssl -legacy) that OpenSSL 3 refuses, with its chain, and names a wrong password', () => {
    const material = loadTlsMaterial({ 'ssl.keystore.location': at('client-rc2.p12'), 'ssl.keystore.password': 'client-store-secret' })
    assert.doesNotThrow(() => createSecureContext({ cert: material.cert, key: material.key }))
    assert.deepEqual(subjectsOf(material.cert?.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g) ?? []), [CLIENT_SUBJECT, CA_SUBJECT])
    storeError({ 'ssl.keystore.location': at('client-rc2.p12'), 'ssl.keystore.password': 'wrong-password' }, 'ssl.keystore.password', /does not open ssl\.keystore\.location/)
  })

  it('reads PEM keystores: one file, an encrypted key with ssl.key.password, and inline values', () => {
    assertClientIdentity({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore-encrypted.pem'), 'ssl.key.password': 'client-key-secret' })
    const oneLine = (name: string): string => readFileSync(at(name), 'utf8').replace(/\n/g, ' ')
    assertClientIdentity({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': oneLine('client-chain.pem'), 'ssl.keystore.key': oneLine('client-key-encrypted.pem'), 'ssl.key.password': 'client-key-secret' })
    const material = loadTlsMaterial({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': oneLine('client-chain.pem'), 'ssl.keystore.key': oneLine('client-key.pem') })
    assert.match(material.key ?? '', /^-----BEGIN PRIVATE KEY-----\n/)
    assert.deepEqual(subjectsOf(material.cert?.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g) ?? []), [CLIENT_SUBJECT, CA_SUBJECT])
  })

  it('names the key password when the key does not decrypt, or when an encrypted key has none', () => {
    storeError({ 'ssl.keystore.location': at('client.jks'), 'ssl.keystore.password': 'client-store-secret' }, 'ssl.key.password', /is not set, and ssl\.keystore\.password does not decrypt the key/)
    storeError({ 'ssl.keystore.location': at('client.jks'), 'ssl.keystore.password': 'client-store-secret', 'ssl.key.password': 'wrong-password' }, 'ssl.key.password', /does not decrypt the key/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': readFileSync(at('client-chain.pem'), 'utf8'), 'ssl.keystore.key': readFileSync(at('client-key-encrypted.pem'), 'utf8') }, 'ssl.key.password', /is not set, but the private key of ssl\.keystore\.key is encrypted/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore-encrypted.pem'), 'ssl.key.password': 'wrong-password' }, 'ssl.key.password', /does not decrypt the private key of ssl\.keystore\.location/)
  })

  it('refuses a PEM keystore file without ssl.key.password, and ssl.key.password with an unencrypted PEM key, as Java does', () => {
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore.pem') }, 'ssl.key.password',
      /is not set, but Java requires it for a PEM keystore file \(ssl\.keystore\.location = .*client-keystore\.pem\), whose key must then be encrypted PKCS#8/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore-encrypted.pem') }, 'ssl.key.password', /is not set, but Java requires it for a PEM keystore file/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore.pem'), 'ssl.key.password': 'client-key-secret' }, 'ssl.key.password',
      /is set, but the private key of ssl\.keystore\.location is not encrypted, which Java refuses: encrypt the key .* or remove ssl\.key\.password and give the key inline with ssl\.keystore\.key/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': readFileSync(at('client-chain.pem'), 'utf8'), 'ssl.keystore.key': readFileSync(at('client-key.pem'), 'utf8'), 'ssl.key.password': 'client-key-secret' }, 'ssl.key.password',
      /is set, but the private key of ssl\.keystore\.key is not encrypted, which Java refuses/)
  })

  it('reads a PKCS12 key with ssl.key.password as Java does: the store password works, another password is refused', () => {
    assertClientIdentity({ 'ssl.keystore.location': at('client.p12'), 'ssl.keystore.password': 'client-store-secret', 'ssl.key.password': 'client-store-secret' })
    storeError({ 'ssl.keystore.location': at('client.p12'), 'ssl.keystore.password': 'client-store-secret', 'ssl.key.password': 'client-key-secret' }, 'ssl.key.password',
      /differs from ssl\.keystore\.password, but the key of the PKCS12 keystore .*client\.p12 is protected by the store password .* so Java would fail to read it/)
  })

  it('names the store password when it does not open the keystore', () => {
    storeError({ 'ssl.keystore.location': at('client.jks'), 'ssl.keystore.password': 'wrong-password', 'ssl.key.password': 'client-key-secret' }, 'ssl.keystore.password', /does not open ssl\.keystore\.location/)
    storeError({ 'ssl.keystore.location': at('client.p12'), 'ssl.keystore.password': 'wrong-password' }, 'ssl.keystore.password', /does not open ssl\.keystore\.location/)
  })

  it('applies Java\'s rules: a JKS/PKCS12 keystore needs its password, PEM takes none, inline PEM needs both parts and type PEM', () => {
    const chain = readFileSync(at('client-chain.pem'), 'utf8')
    const key = readFileSync(at('client-key.pem'), 'utf8')
    storeError({ 'ssl.keystore.location': at('client.p12') }, 'ssl.keystore.password', /is not set: the JKS keystore ssl\.keystore\.location = .* needs its password/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-keystore.pem'), 'ssl.keystore.password': 'x' }, 'ssl.keystore.password', /cannot be used with a PEM keystore/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': key }, 'ssl.keystore.certificate.chain', /is not set, but ssl\.keystore\.key is/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': chain }, 'ssl.keystore.key', /is not set, but ssl\.keystore\.certificate\.chain is/)
    storeError({ 'ssl.keystore.certificate.chain': chain, 'ssl.keystore.key': key }, 'ssl.keystore.type', /needs ssl\.keystore\.type = PEM/)
    storeError({ 'ssl.keystore.password': 'x' }, 'ssl.keystore.location', /is not set, but ssl\.keystore\.password is/)
  })

  it('refuses a key that does not belong to the certificate, and a keystore without a key', () => {
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': readFileSync(at('client-chain.pem'), 'utf8'), 'ssl.keystore.key': readFileSync(at('other-key.pem'), 'utf8') }, 'ssl.keystore.key', /does not belong to the first certificate/)
    storeError({ 'ssl.keystore.location': at('truststore.jks'), 'ssl.keystore.password': 'trust-secret' }, 'ssl.keystore.location', /holds no private key entry/)
    storeError({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': at('client-chain.pem'), 'ssl.key.password': 'client-key-secret' }, 'ssl.keystore.location', /must hold exactly one PEM private key/)
  })
})
