/**
 * Preloaded with `node --import ./bench/startup-hook.ts src/cli/main.ts run ...` by bench/startup-probe.ts:
 * appends one JSON line per Kafka connection and request/response (from @platformatic/kafka's diagnostic
 * channels) to $KMIRROR_STARTUP_TRACE, each with `ms` = milliseconds since this process started.
 * Measurement only: kmirror itself never loads it.
 */
import { subscribe } from 'node:diagnostics_channel'
import { appendFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

const file = process.env['KMIRROR_STARTUP_TRACE']
const API_NAMES: Record<number, string> = {
  0: 'Produce', 1: 'Fetch', 2: 'ListOffsets', 3: 'Metadata', 18: 'ApiVersions', 19: 'CreateTopics', 22: 'InitProducerId', 32: 'DescribeConfigs', 60: 'DescribeCluster', 17: 'SaslHandshake', 36: 'SaslAuthenticate'
}
function note (event: string, fields: Record<string, unknown> = {}): void {
  if (file !== undefined) appendFileSync(file, JSON.stringify({ ms: Math.round(performance.now() * 10) / 10, event, ...fields }) + '\n')
}
note('hook-loaded', { origin: performance.timeOrigin })
interface Ctx { connection?: { port?: number }, apiKey?: number }
const describe = (ctx: Ctx): Record<string, unknown> => ({ port: ctx.connection?.port, api: API_NAMES[ctx.apiKey ?? -1] ?? ctx.apiKey })
subscribe('tracing:plt:kafka:connections:api:start', m => note('request', describe(m as Ctx)))
subscribe('tracing:plt:kafka:connections:api:asyncStart', m => note('response', describe(m as Ctx)))
subscribe('tracing:plt:kafka:connections:connects:start', m => note('connect', describe(m as Ctx)))
subscribe('tracing:plt:kafka:connections:connects:asyncStart', m => note('connected', describe(m as Ctx)))
process.on('exit', () => note('exit'))
