/**
 * A RecordCursor over a real partition: fetches [from, to) in order (read_committed, as the fetcher is set up),
 * one fetch held at a time. Stops at `to` or at the partition's end read before the comparison began; offsets
 * below the log start (retention while reading) are skipped.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { FetchOutcomes, type FetchedRecord, type RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordCursor } from './partition-compare.ts'
import type { OffsetRange } from './pairing.ts'

/** Fetches in a row that may come back RETRY (leader moving) or empty before the cursor gives up. */
const MAX_IDLE_FETCHES = 20

export function fetchCursor (fetcher: Pick<RecordFetcher, 'fetch'>, topic: string, partition: number, range: OffsetRange, end: number, label: string): RecordCursor {
  const stop = Math.min(range.to, end)
  let position = range.from
  let buffer: FetchedRecord[] = []
  let index = 0
  let idle = 0
  let deletedBelow = 0
  const refill = async (): Promise<boolean> => {
    while (position < stop) {
      const [fetched] = await fetcher.fetch([{ topic, partition, offset: position }])
      if (fetched === undefined) throw new KmirrorError(ErrorCodes.FETCH, `${label} gave no answer for ${topic}-${partition} at offset ${position}`, { retriable: true })
      if (fetched.outcome === FetchOutcomes.OUT_OF_RANGE) {
        // Below the log start: retention deleted it since the comparison began. Past the end: nothing more.
        if (fetched.logStartOffset <= position) return false
        position = fetched.logStartOffset
        deletedBelow = position
        continue
      }
      const records = fetched.records.filter(r => r.offset < stop)
      if (fetched.outcome === FetchOutcomes.OK && fetched.nextOffset > position) {
        position = fetched.nextOffset
        idle = 0
        if (records.length > 0) {
          buffer = records
          index = 0
          return true
        }
        continue
      }
      if (++idle >= MAX_IDLE_FETCHES) {
        throw new KmirrorError(ErrorCodes.FETCH, `${label}: ${topic}-${partition} returned nothing at offset ${position} below its end ${stop} after ${MAX_IDLE_FETCHES} fetches (outcome ${fetched.outcome}); is its leader available?`, { retriable: true })
      }
      await delay(100)
    }
    return false
  }
  return {
    next: async () => {
      if (index < buffer.length) return buffer[index++]!
      if (!(await refill())) return null
      return buffer[index++]!
    },
    deletedBelow: () => deletedBelow
  }
}
