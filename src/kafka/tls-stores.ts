/**
 * Key and trust stores written as Java clients write them (`ssl.keystore.*`, `ssl.truststore.*`, `ssl.key.password`)
 * loaded into what Node's TLS takes: PEM certificates and an unencrypted private key (or a PKCS12 blob).
 *
 * Rules follow Kafka's DefaultSslEngineFactory: the default type is JKS; inline PEM values need type PEM and
 * exclude the `location`; PEM stores take no store password; a PEM keystore file needs `ssl.key.password` and an
 * encrypted key, an inline key is encrypted exactly when `ssl.key.password` is set; a JKS/PKCS12 keystore needs
 * its password, a truststore may omit it (no integrity check); a PKCS12 key is decrypted with ssl.key.password
 * when set. Since JDK 9 Java's JKS and PKCS12 key stores each read both formats, so the file's content decides,
 * not the type. Every problem is a ClientConfigError naming the key to fix, never a password.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { createSecureContext, type ConnectionOptions } from 'node:tls'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type * as JksJs from 'jks-js'
import { STORE_TYPES } from '../config/schema.ts'
import type { ClientProps } from '../config/types.ts'
import { ClientConfigError } from './client-config-error.ts'
import { derToPem, isCertificate, isPrivateKey, pemBlocks } from './pem.ts'
import { readPkcs12, type Pkcs12Contents } from './pkcs12.ts'

/**
 * jks-js (and the node-forge it loads) only when a JKS store is read: most clusters use PEM or no TLS, and the two
 * cost about 50 ms of every start.
 */
const requireLazily = createRequire(import.meta.url)
let jks: typeof JksJs | undefined
function jksJs (): typeof JksJs {
  jks ??= requireLazily('jks-js') as typeof JksJs
  return jks
}

export interface TlsMaterial {
  /** Trusted CA certificates (PEM); undefined = Node's default CAs. */
  readonly ca?: readonly string[]
  /** Client certificate chain (PEM), for mutual TLS. */
  readonly cert?: string
  /** Client private key, unencrypted PKCS#8 PEM. */
  readonly key?: string
  /** A PKCS12 keystore Node reads itself (instead of cert and key). */
  readonly pfx?: Buffer
  readonly passphrase?: string
}

/** What Node's TLS takes of the stores (tls.connect, https.request). */
export type NodeTlsOptions = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'checkServerIdentity'>

/**
 * The one mapping of `material` to Node's TLS options, for Kafka connections and https token endpoints alike;
 * `verifyHostname` false turns Node's host-name check off (see `verifiesHostname`).
 */
export function nodeTlsOptions (material: TlsMaterial, verifyHostname: boolean): NodeTlsOptions {
  return {
    ...(material.ca === undefined ? {} : { ca: [...material.ca] }),
    ...(material.cert === undefined ? {} : { cert: material.cert }),
    ...(material.key === undefined ? {} : { key: material.key }),
    ...(material.pfx === undefined ? {} : { pfx: material.pfx }),
    ...(material.passphrase === undefined ? {} : { passphrase: material.passphrase }),
    ...(verifyHostname ? {} : { checkServerIdentity: () => undefined })
  }
}

/** `ssl.endpoint.identification.algorithm`: https (the default) checks the peer's host name, empty turns the check off. */
export function verifiesHostname (props: Readonly<Record<string, string>>): boolean {
  return (props['ssl.endpoint.identification.algorithm'] ?? 'https').trim() !== ''
}

type StoreKind = 'keystore' | 'truststore'
const JKS_MAGIC = 0xfeedfeed
const JCEKS_MAGIC = 0xcececece

export function loadTlsMaterial (props: ClientProps): TlsMaterial {
  return { ...loadTruststore(props), ...loadKeystore(props) }
}

function setting (props: ClientProps, key: string): string | undefined {
  const value = props[key]
  return value === undefined || value.trim() === '' ? undefined : value
}

function storeType (props: ClientProps, kind: StoreKind): string {
  const key = `ssl.${kind}.type`
  const type = (setting(props, key) ?? 'JKS').trim().toUpperCase()
  if (!(STORE_TYPES as readonly string[]).includes(type)) {
    throw new ClientConfigError(key, `is ${JSON.stringify(props[key])}: kmirror reads ${STORE_TYPES.slice(0, -1).join(', ')} and ${STORE_TYPES.at(-1) ?? ''} stores; convert the store (keytool -importkeystore) to one of them`)
  }
  return type
}

function loadKeystore (props: ClientProps): TlsMaterial {
  const location = setting(props, 'ssl.keystore.location')
  const password = setting(props, 'ssl.keystore.password')
  const keyPassword = setting(props, 'ssl.key.password')
  const inlineKey = setting(props, 'ssl.keystore.key')
  const inlineChain = setting(props, 'ssl.keystore.certificate.chain')
  if (inlineKey === undefined && inlineChain === undefined && location === undefined) {
    if (password !== undefined) throw new ClientConfigError('ssl.keystore.location', 'is not set, but ssl.keystore.password is: set the keystore file, or remove the password')
    return {}
  }
  const type = storeType(props, 'keystore')
  if (inlineKey !== undefined || inlineChain !== undefined) {
    if (inlineChain === undefined) throw new ClientConfigError('ssl.keystore.certificate.chain', 'is not set, but ssl.keystore.key is: give the client certificate chain in PEM')
    if (inlineKey === undefined) throw new ClientConfigError('ssl.keystore.key', 'is not set, but ssl.keystore.certificate.chain is: give the client private key in PEM')
    if (type !== 'PEM') throw new ClientConfigError('ssl.keystore.type', `is ${type}, but inline PEM (ssl.keystore.key, ssl.keystore.certificate.chain) needs ssl.keystore.type = PEM`)
    if (location !== undefined) throw new ClientConfigError('ssl.keystore.location', 'is set together with ssl.keystore.key: use either the keystore file or the inline PEM values')
    if (password !== undefined) throw new ClientConfigError('ssl.keystore.password', 'cannot be used with inline PEM: only ssl.key.password (for an encrypted private key) applies')
    return pemKeystore({ chain: inlineChain, chainKey: 'ssl.keystore.certificate.chain', key: inlineKey, keyKey: 'ssl.keystore.key', keyPassword })
  }
  const file = location as string
  if (type === 'PEM') {
    if (password !== undefined) throw new ClientConfigError('ssl.keystore.password', 'cannot be used with a PEM keystore: only ssl.key.password (for an encrypted private key) applies')
    if (keyPassword === undefined) {
      throw new ClientConfigError('ssl.key.password', `is not set, but Java requires it for a PEM keystore file (ssl.keystore.location = ${file}), whose key must then be encrypted PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc): encrypt the key and set ssl.key.password, or give an unencrypted key inline with ssl.keystore.key and ssl.keystore.certificate.chain`)
    }
    const text = readStoreFile('ssl.keystore.location', file).toString('utf8')
    return pemKeystore({ chain: text, chainKey: 'ssl.keystore.location', key: text, keyKey: 'ssl.keystore.location', keyPassword })
  }
  if (password === undefined) throw new ClientConfigError('ssl.keystore.password', `is not set: the ${type} keystore ssl.keystore.location = ${file} needs its password`)
  return binaryKeystore(file, password, keyPassword)
}

function loadTruststore (props: ClientProps): TlsMaterial {
  const location = setting(props, 'ssl.truststore.location')
  const password = setting(props, 'ssl.truststore.password')
  const inline = setting(props, 'ssl.truststore.certificates')
  if (inline === undefined && location === undefined) {
    if (password !== undefined) throw new ClientConfigError('ssl.truststore.location', 'is not set, but ssl.truststore.password is: set the truststore file, or remove the password')
    return {}
  }
  const type = storeType(props, 'truststore')
  if (inline !== undefined) {
    if (type !== 'PEM') throw new ClientConfigError('ssl.truststore.type', `is ${type}, but ssl.truststore.certificates (inline PEM) needs ssl.truststore.type = PEM`)
    if (location !== undefined) throw new ClientConfigError('ssl.truststore.location', 'is set together with ssl.truststore.certificates: use one of them')
    if (password !== undefined) throw new ClientConfigError('ssl.truststore.password', 'cannot be used with PEM certificates: remove it')
    return { ca: pemCertificates(inline, 'ssl.truststore.certificates') }
  }
  const file = location as string
  if (type === 'PEM') {
    if (password !== undefined) throw new ClientConfigError('ssl.truststore.password', 'cannot be used with a PEM truststore: remove it')
    return { ca: pemCertificates(readStoreFile('ssl.truststore.location', file).toString('utf8'), 'ssl.truststore.location') }
  }
  return { ca: binaryTruststore(file, password) }
}

function readStoreFile (key: string, path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (cause as Error).message
    throw new ClientConfigError(key, `= ${path} cannot be read (${reason}): check the path and its permissions`, cause)
  }
}

/** JKS or PKCS12 by content, as Java's dual-format key stores read them; anything else is named. */
function binaryFormat (bytes: Buffer, key: string, path: string, kind: StoreKind): 'JKS' | 'PKCS12' {
  const magic = bytes.length >= 4 ? bytes.readUInt32BE(0) : 0
  if (magic === JKS_MAGIC) return 'JKS'
  if (bytes[0] === 0x30) return 'PKCS12'
  if (magic === JCEKS_MAGIC) throw new ClientConfigError(key, `= ${path} is a JCEKS store, which kmirror cannot read: convert it with keytool -importkeystore -deststoretype PKCS12`)
  if (bytes.toString('latin1').includes('-----BEGIN')) {
    throw new ClientConfigError(`ssl.${kind}.type`, `is not PEM, but ssl.${kind}.location = ${path} holds PEM text: set ssl.${kind}.type = PEM`)
  }
  throw new ClientConfigError(key, `= ${path} is neither a JKS nor a PKCS12 store: check the file`)
}

function binaryKeystore (path: string, password: string, keyPassword: string | undefined): TlsMaterial {
  const bytes = readStoreFile('ssl.keystore.location', path)
  if (binaryFormat(bytes, 'ssl.keystore.location', path, 'keystore') === 'PKCS12') {
    const material = pkcs12Keystore(bytes, path, password)
    if (keyPassword !== undefined && keyPassword !== password) {
      // Java decrypts a PKCS12 key with ssl.key.password; keytool and openssl protect it with the store password.
      throw new ClientConfigError('ssl.key.password', `differs from ssl.keystore.password, but the key of the PKCS12 keystore ${path} is protected by the store password (as keytool and openssl write PKCS12 keystores), so Java would fail to read it: remove ssl.key.password, or set it to the store password`)
    }
    return material
  }
  let entries: ReturnType<typeof JksJs.parseJks>
  try {
    entries = jksJs().parseJks(bytes, password)
  } catch (cause) {
    throw storeOpenError('ssl.keystore', path, cause, password)
  }
  const entry = entries.find(e => 'chain' in e)
  if (entry === undefined || !('chain' in entry)) {
    throw new ClientConfigError('ssl.keystore.location', `= ${path} holds no private key entry: a keystore for mutual TLS needs the client's key and certificate chain`)
  }
  let key: string
  try {
    key = jksJs().decrypt(entry.protectedPrivateKey, keyPassword ?? password)
  } catch (cause) {
    const problem = keyPassword === undefined ? 'is not set, and ssl.keystore.password does not decrypt the key: set ssl.key.password to the key\'s password' : 'does not decrypt the key: check it'
    throw new ClientConfigError('ssl.key.password', `${problem} (private key "${entry.alias}" in ${path})`, cause)
  }
  const cert = entry.chain.map(c => derToPem(c.value, 'CERTIFICATE')).join('')
  return checkedKeyPair(cert, unencryptedKey(key, undefined, 'ssl.keystore.location', path), 'ssl.keystore.location')
}

function pkcs12Keystore (bytes: Buffer, path: string, password: string): TlsMaterial {
  // OpenSSL reads modern PKCS12 files (JDK 9+ keytool, openssl 3); legacy RC2/3DES ones are read with node-forge.
  try {
    createSecureContext({ pfx: bytes, passphrase: password })
    return { pfx: bytes, passphrase: password }
  } catch (nativeError) {
    if (/mac verify failure/i.test((nativeError as Error).message)) throw wrongPassword('ssl.keystore', path, nativeError)
    const [entry] = openPkcs12(bytes, 'ssl.keystore', path, password).keyEntries
    if (entry === undefined) {
      throw new ClientConfigError('ssl.keystore.location', `= ${path} holds no private key entry: a keystore for mutual TLS needs the client's key and certificate chain`)
    }
    return checkedKeyPair(entry.chain.join(''), unencryptedKey(entry.key, undefined, 'ssl.keystore.location', path), 'ssl.keystore.location')
  }
}

function openPkcs12 (bytes: Buffer, prefix: string, path: string, password: string | undefined): Pkcs12Contents {
  try {
    return readPkcs12(bytes, password ?? '')
  } catch (cause) {
    throw storeOpenError(prefix, path, cause, password)
  }
}

function binaryTruststore (path: string, password: string | undefined): string[] {
  const bytes = readStoreFile('ssl.truststore.location', path)
  // Java trusts certificate entries and the first certificate of each key entry (TrustStoreUtil.getTrustedCerts).
  // Each reader refuses a store without any, saying what Java would need in that format.
  const certificates = binaryFormat(bytes, 'ssl.truststore.location', path, 'truststore') === 'JKS'
    ? jksTrustedCertificates(bytes, path, password)
    : pkcs12TrustedCertificates(bytes, path, password)
  return checkedCertificates(certificates, 'ssl.truststore.location')
}

function jksTrustedCertificates (bytes: Buffer, path: string, password: string | undefined): string[] {
  let entries: ReturnType<typeof JksJs.parseJks>
  try {
    entries = jksJs().parseJks(bytes, password ?? '')
  } catch (cause) {
    throw storeOpenError('ssl.truststore', path, cause, password)
  }
  const certificates = entries.flatMap(entry => {
    const cert = 'cert' in entry ? entry.cert : entry.chain[0]
    return cert === undefined ? [] : [derToPem(cert.value, 'CERTIFICATE')]
  })
  if (certificates.length === 0) throw new ClientConfigError('ssl.truststore.location', `= ${path} holds no certificates: import the CA certificate(s) of the brokers`)
  return certificates
}

function pkcs12TrustedCertificates (bytes: Buffer, path: string, password: string | undefined): string[] {
  const contents = openPkcs12(bytes, 'ssl.truststore', path, password)
  const certificates = [...contents.trustedCertificates, ...contents.keyEntries.flatMap(entry => entry.chain.slice(0, 1))]
  if (certificates.length === 0) {
    throw new ClientConfigError('ssl.truststore.location', `= ${path} holds no trusted certificate entry, so Java would trust no broker: Java trusts only certificates marked trusted (keytool -importcert marks them; openssl pkcs12 -export only with -jdktrust anyExtendedKeyUsage, OpenSSL 3.2+) and the first certificate of each key entry. Import the brokers' CA with keytool -importcert, or use ssl.truststore.type = PEM`)
  }
  return certificates
}

function wrongPassword (prefix: string, path: string, cause: unknown): ClientConfigError {
  return new ClientConfigError(`${prefix}.password`, `does not open ${prefix}.location = ${path} (the store's integrity check failed): check the password`, cause)
}

function storeOpenError (prefix: string, path: string, cause: unknown, password?: string): ClientConfigError {
  const message = cause instanceof Error ? cause.message : String(cause)
  if (/password|MAC could not be verified/i.test(message)) {
    if (password !== undefined) return wrongPassword(prefix, path, cause)
    return new ClientConfigError(`${prefix}.password`, `is not set, and ${prefix}.location = ${path} cannot be read without it: set the store's password`, cause)
  }
  return new ClientConfigError(`${prefix}.location`, `= ${path} cannot be read as a key store (${message}): check the file and ${prefix}.type`, cause)
}

function pemCertificates (text: string, key: string): string[] {
  const certificates = pemBlocks(text).filter(isCertificate).map(block => block.text)
  if (certificates.length === 0) {
    throw new ClientConfigError(key, 'holds no PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----): give at least one')
  }
  return checkedCertificates(certificates, key)
}

function checkedCertificates (certificates: string[], key: string): string[] {
  certificates.forEach((pem, i) => {
    try {
      void new X509Certificate(pem)
    } catch (cause) {
      throw new ClientConfigError(key, `holds a certificate that cannot be parsed (certificate ${i + 1}): ${(cause as Error).message}`, cause)
    }
  })
  return certificates
}

interface PemKeystore {
  readonly chain: string
  readonly chainKey: string
  readonly key: string
  readonly keyKey: string
  readonly keyPassword: string | undefined
}

function pemKeystore (store: PemKeystore): TlsMaterial {
  const chain = pemCertificates(store.chain, store.chainKey)
  const keys = pemBlocks(store.key).filter(isPrivateKey)
  if (keys.length !== 1) {
    throw new ClientConfigError(store.keyKey, `must hold exactly one PEM private key (-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----), found ${keys.length}`)
  }
  const key = unencryptedKey((keys[0] as { text: string }).text, store.keyPassword, store.keyKey)
  return checkedKeyPair(chain.join(''), key, store.keyKey)
}

/** The key as unencrypted PKCS#8 PEM; an encrypted key needs `ssl.key.password`. */
function unencryptedKey (pem: string, password: string | undefined, key: string, where?: string): string {
  const place = where === undefined ? key : where
  const encrypted = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4,ENCRYPTED/.test(pem)
  if (password === undefined && encrypted) {
    throw new ClientConfigError('ssl.key.password', `is not set, but the private key of ${place} is encrypted: set it to the key's password`)
  }
  if (password !== undefined && !encrypted) {
    // Java's PemStore reads the key as EncryptedPrivateKeyInfo whenever a key password is set.
    throw new ClientConfigError('ssl.key.password', `is set, but the private key of ${place} is not encrypted, which Java refuses: encrypt the key (openssl pkcs8 -topk8 -v2 aes-256-cbc), or remove ssl.key.password${key === 'ssl.keystore.key' ? '' : ' and give the key inline with ssl.keystore.key'}`)
  }
  try {
    return createPrivateKey(password === undefined ? { key: pem } : { key: pem, passphrase: password }).export({ type: 'pkcs8', format: 'pem' }).toString()
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code
    if (code === 'ERR_MISSING_PASSPHRASE') throw new ClientConfigError('ssl.key.password', `is not set, but the private key of ${place} is encrypted: set it to the key's password`, cause)
    if (password !== undefined && /decrypt|bad password/i.test((cause as Error).message)) {
      throw new ClientConfigError('ssl.key.password', `does not decrypt the private key of ${place}: check it`, cause)
    }
    throw new ClientConfigError(key, `holds a private key that cannot be read: ${(cause as Error).message}`, cause)
  }
}

function checkedKeyPair (cert: string, key: string, where: string): TlsMaterial {
  try {
    createSecureContext({ cert, key })
  } catch (cause) {
    throw new ClientConfigError(where, `holds a private key that does not belong to the first certificate of its chain (${(cause as Error).message}): check the key and the certificate chain`, cause)
  }
  return { cert, key }
}
