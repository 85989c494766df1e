/**
 * ApiVersions (key 18), v0-v3: which versions of each API a broker accepts. Every other request kmirror sends
 * itself is versioned from this answer, per broker connection (see negotiation.ts).
 *
 * A broker asked at a version it does not know does not parse the body: it answers in the v0 layout with
 * UNSUPPORTED_VERSION, listing (since Kafka 2.4, KIP-511) its own ApiVersions range, before 2.4 nothing. The
 * decoder reads that layout whatever version was asked, so the caller can ask again lower.
 */
import type { ApiSpec } from './api.ts'
import type { ByteReader } from './wire.ts'

export const UNSUPPORTED_VERSION = 35

export interface ApiVersionRange {
  readonly min: number
  readonly max: number
}

export interface ApiVersionsRequest {
  readonly clientSoftwareName: string
  readonly clientSoftwareVersion: string
}

export interface ApiVersionsResponse {
  readonly errorCode: number
  readonly apis: ReadonlyMap<number, ApiVersionRange>
}

function readApis (r: ByteReader): Map<number, ApiVersionRange> {
  const apis = new Map<number, ApiVersionRange>()
  r.structs(r => {
    const key = r.int16()
    apis.set(key, { min: r.int16(), max: r.int16() })
  })
  return apis
}

/** The v0 layout (an int32 count, no tagged fields), whatever version was asked: the error answer's layout. */
function readV0Apis (r: ByteReader): Map<number, ApiVersionRange> {
  const apis = new Map<number, ApiVersionRange>()
  const count = r.int32()
  for (let i = 0; i < count; i++) {
    const key = r.int16()
    apis.set(key, { min: r.int16(), max: r.int16() })
  }
  return apis
}

export const ApiVersionsApi: ApiSpec<ApiVersionsRequest, ApiVersionsResponse> = {
  key: 18,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 3,
  responseHeaderAlwaysV0: true,
  encode (w, version, request) {
    if (version < 3) return
    w.string(request.clientSoftwareName).string(request.clientSoftwareVersion).tags()
  },
  decode (r, version) {
    const errorCode = r.int16()
    if (errorCode === UNSUPPORTED_VERSION) return { errorCode, apis: readV0Apis(r) }
    const apis = readApis(r)
    if (version >= 1) r.int32() // throttle_time_ms
    r.tags()
    return { errorCode, apis }
  }
}
