/** A promise with its resolve/reject exposed, to hold a fake's call open until the test releases it. */
export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve (value: T): void
  reject (err: unknown): void
  readonly settled: boolean
}

export function deferred<T = void> (): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (err: unknown) => void
  let settled = false
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  promise.then(() => { settled = true }, () => { settled = true })
  return {
    promise,
    resolve: value => resolve(value),
    reject: err => reject(err),
    get settled () { return settled }
  }
}

/** Lets every queued promise callback (and the I/O phase) run once: no time passes, even with mocked timers. */
export function settle (): Promise<void> {
  return new Promise(resolve => setImmediate(resolve))
}
