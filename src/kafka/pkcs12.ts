/**
 * PKCS12 files read into the entries Java's PKCS12 KeyStore makes of them (node-forge parses the file):
 * - a key entry: a private key bag and its certificate chain, which starts with the certificate bag of the same
 *   localKeyId and goes on through the file's certificates by issuer;
 * - a trusted certificate entry: a certificate bag with Java's trusted-key-usage attribute, which keytool writes
 *   (`openssl pkcs12 -export` writes it only with `-jdktrust anyExtendedKeyUsage`, OpenSSL 3.2+);
 * - any other certificate bag is part of no entry (a chain certificate, or an `openssl -nokeys` certificate).
 * Entries need no friendlyName: Java gives nameless ones a name of its own.
 */
import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import type Forge from 'node-forge'
import { derToPem } from './pem.ts'

/** Oracle's trusted-key-usage bag attribute (JDK PKCS12KeyStore), which node-forge does not know and would drop. */
const TRUSTED_KEY_USAGE_OID = '2.16.840.1.113894.746875.1.1'
const TRUSTED_KEY_USAGE = 'javaTrustedKeyUsage'
/** node-forge only when a PKCS12 store needs it (about 50 ms of every start otherwise). */
const requireLazily = createRequire(import.meta.url)
let loaded: typeof Forge | undefined
function forgeLib (): typeof Forge {
  if (loaded === undefined) {
    loaded = requireLazily('node-forge') as typeof Forge
    const oids = loaded.pki.oids as Record<string, string>
    oids[TRUSTED_KEY_USAGE_OID] = TRUSTED_KEY_USAGE
    oids[TRUSTED_KEY_USAGE] = TRUSTED_KEY_USAGE_OID
  }
  return loaded
}

export interface Pkcs12KeyEntry {
  /** Unencrypted PKCS#8 PEM. */
  readonly key: string
  /** PEM certificates, the key's own first. */
  readonly chain: readonly string[]
}

export interface Pkcs12Contents {
  readonly keyEntries: readonly Pkcs12KeyEntry[]
  /** PEM certificates of the trusted certificate entries. */
  readonly trustedCertificates: readonly string[]
}

interface BagAttributes {
  readonly localKeyId?: readonly string[]
  readonly [TRUSTED_KEY_USAGE]?: readonly unknown[]
}

interface CertificateBag {
  readonly pem: string
  readonly localKeyId: string | undefined
  readonly trusted: boolean
}

/** The entries of a PKCS12 file; throws node-forge's error when the password or the file is wrong. */
export function readPkcs12 (bytes: Buffer, password: string): Pkcs12Contents {
  const forge = forgeLib()
  const pfx = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(bytes.toString('binary'))), false, password)
  const bags = pfx.safeContents.flatMap(contents => contents.safeBags)
  const certificates: CertificateBag[] = bags.filter(bag => bag.type === forge.pki.oids.certBag).map(bag => {
    const attributes = (bag.attributes ?? {}) as BagAttributes
    const der = forge.asn1.toDer(bag.cert === undefined || bag.cert === null ? bag.asn1 : forge.pki.certificateToAsn1(bag.cert)).getBytes()
    return { pem: derToPem(Buffer.from(der, 'binary'), 'CERTIFICATE'), localKeyId: attributes.localKeyId?.[0], trusted: attributes[TRUSTED_KEY_USAGE] !== undefined }
  })
  const keyEntries = bags
    .filter(bag => bag.type === forge.pki.oids.pkcs8ShroudedKeyBag || bag.type === forge.pki.oids.keyBag)
    .flatMap(bag => {
      const localKeyId = ((bag.attributes ?? {}) as BagAttributes).localKeyId?.[0]
      const leaf = certificates.find(c => localKeyId !== undefined && c.localKeyId === localKeyId)
      if (leaf === undefined) return []
      const info = bag.key === undefined || bag.key === null ? bag.asn1 : forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key))
      return [{ key: forge.pki.privateKeyInfoToPem(info), chain: chainFrom(leaf.pem, certificates.map(c => c.pem)) }]
    })
  return { keyEntries, trustedCertificates: certificates.filter(c => c.trusted).map(c => c.pem) }
}

/** `leaf`, then its issuer among `pool`, and so on, until a self-signed certificate or no issuer is found. */
function chainFrom (leaf: string, pool: readonly string[]): string[] {
  const chain = [leaf]
  let current = new X509Certificate(leaf)
  while (chain.length <= pool.length) {
    const subject = current
    const issuer = pool.find(pem => !chain.includes(pem) && subject.checkIssued(new X509Certificate(pem)))
    if (issuer === undefined || subject.checkIssued(subject)) break
    chain.push(issuer)
    current = new X509Certificate(issuer)
  }
  return chain
}
