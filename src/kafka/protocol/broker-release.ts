/**
 * Which Apache Kafka release a broker looks like, from the newest Fetch and Produce versions it offers: for log
 * lines and error messages only (kmirror never decides anything from it; versions are negotiated per API).
 * The table comes from Kafka's FetchRequest.json and ProduceRequest.json at each release tag.
 */
import type { ApiVersionRange } from './api-versions.ts'

const FETCH = 1
const PRODUCE = 0

/** [newest Fetch, newest Produce, release]: the first row both reach, read from the newest down. */
const RELEASES: readonly (readonly [number, number, string])[] = [
  [18, 13, '4.1 or newer'],
  [17, 12, '4.0'],
  [17, 11, '3.9'],
  [16, 11, '3.8'],
  [16, 10, '3.7'],
  [15, 9, '3.5-3.6'],
  [13, 9, '3.1-3.4'],
  [12, 9, '2.8-3.0'],
  [12, 8, '2.7'],
  [11, 8, '2.4-2.6'],
  [11, 7, '2.3'],
  [10, 7, '2.1-2.2']
]

/** E.g. "Kafka 3.5-3.6", or "Kafka 2.0 or older" below the floor. */
export function describeBrokerRelease (apis: ReadonlyMap<number, ApiVersionRange>): string {
  const fetch = apis.get(FETCH)?.max ?? -1
  const produce = apis.get(PRODUCE)?.max ?? -1
  const row = RELEASES.find(([f, p]) => fetch >= f && produce >= p)
  return `Kafka ${row?.[2] ?? '2.0 or older'}`
}
