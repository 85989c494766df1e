/**
 * Realistic, compressible JSON payloads of an exact size, for ProducerPerformance's `--payload-file`
 * (one payload per line; the tool picks lines at random).
 */
import { writeFileSync } from 'node:fs'

const WORDS = ['order', 'shipped', 'pending', 'customer', 'express', 'warehouse', 'invoice', 'refund', 'priority',
  'standard', 'returned', 'gift', 'fragile', 'insured', 'domestic', 'international', 'discount', 'loyalty']
const CITIES = ['Berlin', 'Lisbon', 'Osaka', 'Toronto', 'Nairobi', 'Lima', 'Oslo', 'Austin', 'Pune', 'Perth']
const SKUS = ['SKU-1001', 'SKU-1002', 'SKU-2040', 'SKU-3300', 'SKU-4711', 'SKU-5150', 'SKU-6060', 'SKU-7007']

/** A small deterministic PRNG (mulberry32): the same seed gives the same payloads on every machine. */
function randomFrom (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function orderEvent (i: number, rnd: () => number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!
  const items = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => ({
    sku: pick(SKUS), qty: 1 + Math.floor(rnd() * 5), price: Math.round(rnd() * 20_000) / 100
  }))
  return {
    eventId: `evt-${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
    type: 'OrderUpdated',
    occurredAt: new Date(1_767_225_600_000 + i * 1_337).toISOString(),
    orderId: 100_000 + i,
    customer: { id: `cust-${Math.floor(rnd() * 50_000)}`, tier: pick(['gold', 'silver', 'bronze']), city: pick(CITIES) },
    status: pick(['created', 'paid', 'packed', 'shipped', 'delivered']),
    currency: pick(['EUR', 'USD', 'JPY']),
    items,
    shipping: { method: pick(['express', 'standard', 'economy']), address: { city: pick(CITIES), zip: String(10_000 + Math.floor(rnd() * 89_999)) } },
    tags: [pick(WORDS), pick(WORDS), pick(WORDS)]
  }
}

/**
 * One JSON object of exactly SIZE bytes (ASCII, no newline): an order event whose `note` field of words
 * pads it to the size. SIZE must leave room for the event itself (about 500 bytes).
 */
export function jsonPayload (i: number, size: number, rnd: () => number = randomFrom(i + 1)): string {
  const event = orderEvent(i, rnd)
  const base = JSON.stringify({ ...event, note: '' })
  if (base.length > size) throw new Error(`payload size ${size} is below the ${base.length} bytes of the event itself`)
  let note = ''
  while (note.length < size - base.length) note += `${WORDS[Math.floor(rnd() * WORDS.length)]} `
  return JSON.stringify({ ...event, note: note.slice(0, size - base.length) })
}

/** Writes COUNT distinct payloads of SIZE bytes, one per line, to FILE. */
export function writePayloadFile (file: string, count: number, size: number): void {
  const lines = Array.from({ length: count }, (_, i) => jsonPayload(i, size))
  writeFileSync(file, `${lines.join('\n')}\n`)
}
