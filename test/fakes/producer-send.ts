/**
 * Replaces the Kafka library's `Producer.prototype.send` for one test (restored with the test's mock), so
 * RecordWriter can be driven without a broker. Each partition behaves like a log that other producers also
 * write to: every request's base offset is 10 past the end of the previous one, so segments are visible.
 */
import type { TestContext } from 'node:test'
import { Producer, UserError, type MessageToProduce } from '@platformatic/kafka'
import { deferred, type Deferred } from './deferred.ts'

export interface FakeSend {
  /** The messages of each request, in order. */
  readonly requests: MessageToProduce[][]
  /** The next request stays unanswered until the returned deferred is resolved. */
  holdNext (): Deferred<void>
  /** The next request's answer leaves out this partition. */
  omitNext (topic: string, partition: number): void
  /** The next request fails with `err`, as the library would throw it. */
  failNext (err: unknown): void
  /** Partition counts the fake metadata reports per topic: cached (stale) and after a forced refresh. */
  partitionCounts: { cached: number, refreshed: number }
  /** How many metadata reads were forced. */
  readonly forcedMetadata: number
  /** The next this many metadata reads throw the library's `Unknown topic NAME.` (a topic created a moment ago). */
  unknownTopicReads: number
}

export function installFakeSend (t: TestContext): FakeSend {
  const requests: MessageToProduce[][] = []
  const next = new Map<string, number>()
  let hold: Deferred<void> | null = null
  let omit: string | null = null
  let failure: unknown = null
  const counts = { cached: 1000, refreshed: 1000 }
  let forced = 0
  const state = { unknownTopicReads: 0 }
  t.mock.method(Producer.prototype, 'metadata', async (options: { topics: string[], forceUpdate?: boolean }) => {
    if (options.forceUpdate === true) forced++
    if (state.unknownTopicReads > 0) {
      state.unknownTopicReads--
      throw new UserError(`Unknown topic ${options.topics[0]}.`)
    }
    const partitionsCount = options.forceUpdate === true ? counts.refreshed : counts.cached
    return { topics: new Map(options.topics.map(topic => [topic, { partitionsCount }])) }
  })
  t.mock.method(Producer.prototype, 'send', async (options: { messages: MessageToProduce[] }) => {
    requests.push(options.messages)
    const held = hold
    hold = null
    if (held !== null) await held.promise
    if (failure !== null) {
      const err = failure
      failure = null
      throw err
    }
    const counts = new Map<string, { topic: string, partition: number, count: number }>()
    for (const m of options.messages) {
      const key = `${m.topic}\u0000${m.partition}`
      const entry = counts.get(key) ?? { topic: m.topic, partition: m.partition!, count: 0 }
      entry.count++
      counts.set(key, entry)
    }
    const offsets = []
    for (const [key, { topic, partition, count }] of counts) {
      const base = next.get(key) ?? 0
      next.set(key, base + count + 10)
      if (key !== omit) offsets.push({ topic, partition, offset: BigInt(base) })
    }
    omit = null
    return { offsets }
  })
  return {
    requests,
    holdNext: () => { hold = deferred(); return hold },
    omitNext: (topic, partition) => { omit = `${topic}\u0000${partition}` },
    failNext: err => { failure = err },
    partitionCounts: counts,
    get forcedMetadata () { return forced },
    get unknownTopicReads () { return state.unknownTopicReads },
    set unknownTopicReads (n: number) { state.unknownTopicReads = n }
  }
}
