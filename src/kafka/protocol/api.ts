/**
 * What a protocol file declares about one Kafka API: its key, the versions kmirror can speak, where the flexible
 * encoding starts, and the request and response grammar per version. Encoding and decoding are pure (bytes in,
 * values out), so each API is golden-tested against bytes captured from real brokers.
 *
 * Version ranges: the lowest version is what Apache Kafka 2.1 (kmirror's floor, as for the Java client 4.x)
 * offers at most, so a broker that cannot meet it is older than the floor; the highest is the newest version
 * whose grammar kmirror implements.
 */
import { ByteReader, ByteWriter } from './wire.ts'

export interface ApiSpec<Request, Response> {
  readonly key: number
  readonly name: string
  readonly minVersion: number
  readonly maxVersion: number
  /** First version using compact encodings and tagged fields (request header v2, response header v1). */
  readonly flexibleFrom: number
  /** ApiVersions answers with response header v0 whatever its version (its own exception in the protocol). */
  readonly responseHeaderAlwaysV0?: boolean
  encode (w: ByteWriter, version: number, request: Request): void
  decode (r: ByteReader, version: number): Response
}

export function isFlexible (spec: ApiSpec<unknown, unknown>, version: number): boolean {
  return version >= spec.flexibleFrom
}

/** The request body at `version`, as chunks (record batches stay uncopied). */
export function encodeRequest<Req> (spec: ApiSpec<Req, unknown>, version: number, request: Req): Buffer[] {
  assertSpoken(spec, version)
  const w = new ByteWriter(isFlexible(spec, version))
  spec.encode(w, version, request)
  return w.chunks()
}

/** The response body at `version`, read from `offset` (after the response header) to the end of `buffer`. */
export function decodeResponse<Res> (spec: ApiSpec<unknown, Res>, version: number, buffer: Buffer, offset = 0): Res {
  assertSpoken(spec, version)
  const reader = new ByteReader(buffer, isFlexible(spec, version), offset)
  const response = spec.decode(reader, version)
  // Every byte is accounted for: a grammar that reads too little would otherwise go unnoticed.
  if (reader.remaining !== 0) throw new RangeError(`${spec.name} v${version} response has ${reader.remaining} bytes past its end`)
  return response
}

function assertSpoken (spec: ApiSpec<unknown, unknown>, version: number): void {
  if (version < spec.minVersion || version > spec.maxVersion) {
    throw new RangeError(`${spec.name} v${version} is outside what kmirror speaks (v${spec.minVersion}-v${spec.maxVersion})`)
  }
}
