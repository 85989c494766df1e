/**
 * How long each test file of a `node --test` run took, so that scripts/test-lanes.ts can weigh files by what they
 * cost on the machine that runs CI (its MEASURED_SECONDS) instead of by a guess that ages.
 *
 * Used as a second reporter of the integration runs (`--test-reporter=<repo>/scripts/file-seconds.ts`): it writes
 * one JSON object, file name (no directory, no `.test.ts`) to whole seconds, to its destination when the run ends.
 * Files run one at a time in a lane (the runner's concurrency 1; with more, files would overlap and be charged
 * wrongly), and the runner passes a file's events on as its process prints them. A file is charged from its first
 * event other than `test:enqueue` (its `test:dequeue`, just before its process starts) to the next file's: its own
 * start-up included. Enqueue events are left out because the runner queues the next file as soon as one starts, so
 * they would charge a file's start-up to the file after it. The spec reporter names no file, so this is the only
 * record of them.
 */

/** The part of a `node:test` reporter event this needs: its type, and which file it came from, if any. */
export interface FileEvent { type?: string, data?: { file?: string } }

/** FILE as MEASURED_SECONDS keys it: `test/integration/demo.test.ts` → `demo`. */
export function fileKey (file: string): string {
  return file.replace(/^.*\//, '').replace(/\.test\.ts$/, '')
}

/** Charges the time between file changes to the file that ran; NOW is injected for tests. */
export class FileClock {
  readonly #seconds = new Map<string, number>()
  #current: { key: string, since: number } | undefined
  readonly #now: () => number

  constructor (now: () => number = Date.now) {
    this.#now = now
  }

  /** An event of FILE arrived: the file before it, if another, ended now. */
  seen (file: string): void {
    const key = fileKey(file)
    if (this.#current?.key === key) return
    this.#close()
    this.#current = { key, since: this.#now() }
  }

  /** Every file's seconds, the run having ended now: longest first. */
  end (): Array<[string, number]> {
    this.#close()
    return [...this.#seconds].map(([k, ms]): [string, number] => [k, Math.round(ms / 1000)]).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  }

  #close (): void {
    if (this.#current === undefined) return
    const { key, since } = this.#current
    this.#seconds.set(key, (this.#seconds.get(key) ?? 0) + this.#now() - since)
    this.#current = undefined
  }
}

/** The reporter: consumes the run's events, yields the JSON object once they end. */
export default async function * fileSecondsReporter (source: AsyncIterable<FileEvent>): AsyncGenerator<string> {
  const clock = new FileClock()
  for await (const event of source) {
    const file = event.data?.file
    if (file !== undefined && event.type !== 'test:enqueue') clock.seen(file)
  }
  yield `${JSON.stringify(Object.fromEntries(clock.end()))}\n`
}

/** The line a runner prints from the JSON objects the reporter wrote (one per lane): paste-ready for MEASURED_SECONDS. */
export function describeFileSeconds (...jsons: string[]): string {
  const entries = jsons.flatMap(json => Object.entries(JSON.parse(json) as Record<string, number>)).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  const total = entries.reduce((sum, [, s]) => sum + s, 0)
  return `seconds each file took (${entries.length} files, ${total} s; the weights of scripts/test-lanes.ts): ${entries.map(([k, s]) => `'${k}': ${s}`).join(', ')}`
}
