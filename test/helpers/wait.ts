/**
 * Waiting for conditions instead of sleeping, and names that never collide between tests.
 */
import { randomBytes } from 'node:crypto'
import { inspect } from 'node:util'

/**
 * What a condition observed: `true` when done, `false` when not, or `{ done, state }` to describe what was
 * seen so a timeout explains itself ("3 of 10 records copied" beats "timed out").
 */
export type Observation = boolean | { done: boolean; state?: unknown }

export interface WaitOptions {
  timeoutMs: number
  /** Pause between two checks; 100 ms by default. */
  intervalMs?: number
  /** What was awaited, in words: the first line of the error on timeout. */
  message: string
}

export class WaitTimeoutError extends Error {
  readonly lastState: unknown
  constructor (message: string, lastState: unknown) {
    super(message)
    this.name = 'WaitTimeoutError'
    this.lastState = lastState
  }
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

function describe (value: unknown): string {
  if (value instanceof Error) return `threw ${value.stack ?? value.message}`
  return inspect(value, { depth: 6, breakLength: 120, maxArrayLength: 50, maxStringLength: 2000 })
}

/**
 * Checks CONDITION until it reports done or TIMEOUTMS pass, then throws a WaitTimeoutError naming MESSAGE,
 * the time waited and the last state seen. A condition that throws counts as "not yet" and its error is
 * the last state (clusters and processes are often briefly unavailable); the check always runs at least once.
 */
export async function waitFor (condition: () => Promise<Observation> | Observation, options: WaitOptions): Promise<void> {
  await waitForValue(async () => {
    const observed = await condition()
    if (typeof observed === 'boolean') return { done: observed, state: observed }
    return { done: observed.done, state: observed.state }
  }, options)
}

/**
 * Like waitFor, but resolves with the state of the successful check: e.g. wait until readPartition returns
 * ten records and get them back. PRODUCE returns `{ done, state }`.
 */
export async function waitForValue<T> (
  produce: () => Promise<{ done: boolean; state: T }> | { done: boolean; state: T },
  { timeoutMs, intervalMs = 100, message }: WaitOptions
): Promise<T> {
  const started = Date.now()
  let last: unknown = '(not checked yet)'
  for (;;) {
    try {
      const { done, state } = await produce()
      if (done) return state
      last = state
    } catch (error) {
      last = error
    }
    const waited = Date.now() - started
    if (waited >= timeoutMs) {
      throw new WaitTimeoutError(`${message}: not true after ${waited} ms; last state: ${describe(last)}`, last)
    }
    await sleep(Math.min(intervalMs, Math.max(1, timeoutMs - waited)))
  }
}

/**
 * PREFIX plus a base-36 timestamp and 6 random hex characters, e.g. `harness-mbx1k2p3-a1b2c3`.
 * Only [a-zA-Z0-9-] survive, so the result is a valid topic, group and transactional id, and never mixes
 * '.' and '_' (which Kafka treats as colliding in metric names).
 */
export function uniqueName (prefix: string): string {
  const clean = prefix.replace(/[^a-zA-Z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 't'
  const name = `${clean}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
  return name.length <= 200 ? name : name.slice(name.length - 200)
}
