/**
 * `node bench/partition-creation.ts BROKER_LOG [--since HH:MM:SS]`: how fast a broker made new partitions
 * writable, from its own log (INFO level, as `scripts/kafka-local.sh` runs it: `.state/logs/NAME.log`). Each
 * "Leader <topic>-<partition> ... starts at leader epoch 0" line is a partition the broker has loaded and leads;
 * lines are grouped by topic family (the topic name without a trailing `-NNNN` index, as the `partitions`
 * scenario names its 1,000 topics), and each family's first and last such line give the seconds the broker took.
 *
 * Why: in the `partitions` scenario kmirror's time is its start-up, the broker creating 5,000 partitions, and a
 * tail; comparing the broker's own creation window of kmirror's remote topics (`K.parts-…`) with the limit's
 * (`limit-parts-…`) of the same run says whether kmirror's requests slow the broker down, which wall-clock
 * seconds on a shared machine cannot.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

const { positionals, values } = parseArgs({ allowPositionals: true, options: { since: { type: 'string' } } })
const file = positionals[0]
if (file === undefined) throw new Error('usage: node bench/partition-creation.ts BROKER_LOG [--since HH:MM:SS]')
const LINE = /^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] INFO \[Broker id=\d+\] Leader (\S+)-\d+ with .* starts at leader epoch 0 /
const families = new Map<string, { count: number, first: string, last: string, firstMs: number, lastMs: number }>()
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const match = LINE.exec(line)
  if (match === null) continue
  const [, time, millis, topic] = match as unknown as [string, string, string, string]
  if (values.since !== undefined && time.slice(11) < values.since) continue
  const family = topic.replace(/-\d{4}$/, '')
  const ms = Date.parse(`${time.replace(' ', 'T')}.${millis}Z`)
  const seen = families.get(family)
  if (seen === undefined) families.set(family, { count: 1, first: time.slice(11), last: time.slice(11), firstMs: ms, lastMs: ms })
  else Object.assign(seen, { count: seen.count + 1, last: time.slice(11), lastMs: ms })
}
for (const [family, f] of families) {
  if (f.count < 100) continue
  const seconds = (f.lastMs - f.firstMs) / 1000
  console.log(`${family}: ${f.count} partitions led from ${f.first} to ${f.last}: ${seconds.toFixed(1)} s (${(f.count / Math.max(seconds, 0.001)).toFixed(0)}/s)`)
}
