/**
 * `kmirror verify`'s progress bar: one line on a terminal's stderr, redrawn in place
 * (`verify A->B [###...] 3/8 partitions, 12345 records read`) and erased before the report is printed, so the
 * report itself (stdout) never carries it.
 */
import type { VerifyProgress } from '../verify/verify.ts'

const BAR_WIDTH = 30
const REDRAW_MS = 100

export interface ProgressBar {
  readonly update: (progress: VerifyProgress) => void
  readonly clear: () => void
}

/** Redrawn when a partition is done, and at most every 100 ms between (a redraw per fetched batch would flood a slow terminal). */
export function progressBar (flow: string, write: (text: string) => void, now: () => number = Date.now): ProgressBar {
  let drawn = -Infinity
  let done = -1
  let shown = false
  return {
    update: p => {
      const at = now()
      if (at - drawn < REDRAW_MS && p.partitionsDone === done) return
      done = p.partitionsDone
      drawn = at
      shown = true
      const filled = p.partitions === 0 ? BAR_WIDTH : Math.round(BAR_WIDTH * p.partitionsDone / p.partitions)
      write(`\r\x1b[2Kverify ${flow} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${p.partitionsDone}/${p.partitions} partitions, ${p.records} records read`)
    },
    clear: () => {
      if (shown) write('\r\x1b[2K')
    }
  }
}
