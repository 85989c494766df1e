/**
 * Records/s and bytes/s per flow, from the copied-records and copied-bytes counters of its partitions, sampled
 * whenever status is read (and by the HTTP endpoint's own timer, so that a rate exists before the first reader).
 *
 * Invariants: samples of a flow are kept in time order and span at most WINDOW_MS plus one sample; a rate needs
 * two samples at least MIN_SPAN_MS apart (else null: unknown, never a made-up 0); a counter that went down (a
 * partition handed to another member leaves the status with its counts) restarts the flow's window.
 *
 * Worked example: samples (t=0 s, 1,000 records) and (t=2 s, 1,600 records): (1,600 - 1,000) / 2 = 300 records/s.
 */
import type { FlowStatus } from './flow-status.ts'

export interface FlowRate {
  readonly recordsPerSecond: number | null
  readonly bytesPerSecond: number | null
}

interface Sample {
  readonly at: number
  readonly records: number
  readonly bytes: number
}

/** The span over which a rate is averaged. */
export const WINDOW_MS = 5000
/** Below this span between the oldest and newest sample, the rate is unknown. */
export const MIN_SPAN_MS = 500

export const UNKNOWN_RATE: FlowRate = Object.freeze({ recordsPerSecond: null, bytesPerSecond: null })

export class FlowRates {
  readonly #samples = new Map<string, Sample[]>()

  /** Adds a sample of every flow at `now` (ms); forgets flows no longer present. */
  sample (flows: readonly Pick<FlowStatus, 'name' | 'partitions'>[], now: number): void {
    const names = new Set<string>()
    for (const flow of flows) {
      names.add(flow.name)
      let records = 0
      let bytes = 0
      for (const p of flow.partitions) {
        records += p.copiedRecords
        bytes += p.copiedBytes
      }
      this.#add(flow.name, { at: now, records, bytes })
    }
    for (const name of this.#samples.keys()) if (!names.has(name)) this.#samples.delete(name)
  }

  #add (flow: string, sample: Sample): void {
    const samples = this.#samples.get(flow) ?? []
    const last = samples.at(-1)
    if (last !== undefined && (sample.records < last.records || sample.bytes < last.bytes)) samples.length = 0
    if (last !== undefined && sample.at <= last.at) samples.pop()
    samples.push(sample)
    // Keep one sample older than the window, so that the window is covered whole.
    while (samples.length > 2 && sample.at - samples[1]!.at >= WINDOW_MS) samples.shift()
    this.#samples.set(flow, samples)
  }

  /** The flow's rates over the samples of the last WINDOW_MS. */
  rate (flow: string): FlowRate {
    const samples = this.#samples.get(flow)
    const first = samples?.[0]
    const last = samples?.at(-1)
    if (first === undefined || last === undefined || last.at - first.at < MIN_SPAN_MS) return UNKNOWN_RATE
    const seconds = (last.at - first.at) / 1000
    return { recordsPerSecond: round((last.records - first.records) / seconds), bytesPerSecond: round((last.bytes - first.bytes) / seconds) }
  }
}

function round (n: number): number {
  return Math.round(n * 10) / 10
}
