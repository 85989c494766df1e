/**
 * PEM text as Java's Kafka client reads it (DefaultSslEngineFactory.PemParser): every `-----BEGIN X-----` …
 * `-----END X-----` block anywhere in the text, whitespace inside the base64 ignored. Inline values written
 * with `\` line continuations in mm2.properties arrive as ONE line (java.util.Properties joins the lines and
 * drops their leading blanks), e.g. `-----BEGIN CERTIFICATE----- MIIC… -----END CERTIFICATE-----`; Node's TLS
 * wants the base64 on lines of its own, so blocks are re-wrapped here.
 */

export interface PemBlock {
  /** `CERTIFICATE`, `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, `RSA PRIVATE KEY`, … (inner blanks collapsed). */
  readonly label: string
  /** The block re-written with 64-character base64 lines, ending in a newline. */
  readonly text: string
}

// BEGIN marker, optional RFC 1421 headers (`Proc-Type: …` lines: only when written on lines of their own),
// the base64 body, and the END marker with the same label.
const BLOCK = /-----BEGIN ([A-Z0-9 ]+?)\s*-----((?:\s*[A-Za-z-]+:[^\r\n]*[\r\n]+)*)([A-Za-z0-9+/=\s]*)-----END \1\s*-----/g

/** Every PEM block of `text`, in order, normalised. Text outside blocks is ignored, as Java ignores it. */
export function pemBlocks (text: string): PemBlock[] {
  const blocks: PemBlock[] = []
  for (const match of text.matchAll(BLOCK)) {
    const label = (match[1] ?? '').trim().replace(/\s+/g, ' ')
    const headers = (match[2] ?? '').split(/[\r\n]+/).map(line => line.trim()).filter(line => line !== '')
    const base64 = (match[3] ?? '').replace(/\s+/g, '')
    const lines = base64.match(/.{1,64}/g) ?? []
    const head = headers.length > 0 ? `${headers.join('\n')}\n\n` : ''
    blocks.push({ label, text: `-----BEGIN ${label}-----\n${head}${lines.join('\n')}\n-----END ${label}-----\n` })
  }
  return blocks
}

export function isCertificate (block: PemBlock): boolean {
  return block.label === 'CERTIFICATE' || block.label === 'X509 CERTIFICATE' || block.label === 'TRUSTED CERTIFICATE'
}

export function isPrivateKey (block: PemBlock): boolean {
  return block.label.endsWith('PRIVATE KEY')
}

/** DER bytes as one PEM block. */
export function derToPem (der: Uint8Array, label: string): string {
  const lines = Buffer.from(der).toString('base64').match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}
