/** Bytes from hex written with any spacing or `|` field separators, as in mm2-spec §2.3. */
export function hex (text: string): Buffer {
  return Buffer.from(text.replace(/[\s|]/g, ''), 'hex')
}
