/**
 * The console is static HTML and browser JavaScript: it cannot import the engine's constants, so the durations it
 * names are written out. This keeps them in step with the constants they describe.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { SLOW_MS } from '../../../src/kafka/slow-brokers.ts'
import { TROUBLE_WINDOW_MS } from '../../../src/runtime/broker-troubles.ts'
import { REPO_ROOT } from '../../helpers/clusters.ts'

const asset = (name: string): string => readFileSync(join(REPO_ROOT, 'src', 'http', 'console', name), 'utf8')

test('the console names the broker-trouble window and the slow-request threshold as the engine counts them', () => {
  assert.match(asset('index.html'), new RegExp(`Brokers in trouble <span class="muted">\\(the last ${TROUBLE_WINDOW_MS / 60_000} minutes\\)`))
  assert.match(asset('render.js'), new RegExp(`slow: 'slow: a request held ${SLOW_MS / 1000} s'`))
})
