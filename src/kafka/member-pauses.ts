/**
 * How a group member's two loops (join, heartbeat) wait: for a time, for a wake-up (a rejoin asked for), for the
 * stop, and (tests only) for the thaw of a freeze that behaves like SIGSTOP.
 *
 * Invariants: after `stop()` no wait lasts (every sleep resolves at once, a freeze is thawed, `untilStopped` gives
 * up on its work); `nap` is cut short by `wake()` or the stop, `sleep` only by the stop (heartbeats and back-offs
 * keep their pace through rejoins).
 */
export class MemberPauses {
  #wake: (() => void) | null = null
  #frozen: { promise: Promise<void>, resume: () => void } | null = null
  #stopped = false
  readonly #stopSignal: Promise<void>
  #signalStop: () => void = () => {}

  constructor () {
    this.#stopSignal = new Promise(resolve => { this.#signalStop = resolve })
  }

  /** Ends every wait now and from now on. */
  stop (): void {
    this.#stopped = true
    this.#signalStop()
    this.thaw()
    this.wake()
  }

  /** Cuts the current `nap` short. */
  wake (): void {
    const wake = this.#wake
    this.#wake = null
    wake?.()
  }

  /** Waits MS, or less when woken or stopped; not at all when SKIP (a rejoin already asked for). */
  nap (ms: number, skip: boolean): Promise<void> {
    if (this.#stopped || skip) return Promise.resolve()
    return new Promise(resolve => {
      const timer = setTimeout(() => { this.#wake = null; resolve() }, ms)
      this.#wake = () => { clearTimeout(timer); resolve() }
    })
  }

  /** Waits MS, or less when stopped (never woken by rejoins: heartbeats, back-off). */
  async sleep (ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([new Promise<void>(resolve => { timer = setTimeout(resolve, ms) }), this.#stopSignal])
    clearTimeout(timer)
  }

  /** WORK's outcome, or ON_STOP once the member stops first (the work goes on; nobody waits for it). */
  async untilStopped<T> (work: Promise<T>, onStop: T): Promise<T> {
    return await Promise.race([work, this.#stopSignal.then(() => onStop)])
  }

  /** Resolves at once, or when a freeze (tests) is thawed. */
  async unlessFrozen (): Promise<void> {
    await this.#frozen?.promise
  }

  /** Tests: the loops wait as in a process frozen by SIGSTOP until `thaw`. */
  freeze (): void {
    if (this.#frozen !== null || this.#stopped) return
    let resume = (): void => {}
    const promise = new Promise<void>(resolve => { resume = resolve })
    this.#frozen = { promise, resume }
  }

  thaw (): void {
    const frozen = this.#frozen
    this.#frozen = null
    frozen?.resume()
  }
}
