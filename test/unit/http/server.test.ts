import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startHttpServer } from '../../../src/http/server.ts'
import { silentLogger } from '../../../src/logger.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import { processRedactor } from '../../../src/redactor.ts'

describe('/status', () => {
  it('never shows a secret of the configuration, even inside the error that stopped replication', async () => {
    // Given a loaded configuration's secret, and a failure whose message quotes it
    processRedactor.add({ certain: ['pw-from-a-provider', 'p"w\\ 2%/'] })
    const failure = new Error(`authentication failed for password pw-from-a-provider, request ${JSON.stringify({ password: 'p"w\\ 2%/' })}`)
    const server = await startHttpServer({
      host: '127.0.0.1', port: 0, metrics: new PrometheusMetrics(), log: silentLogger(),
      source: { status: () => [{ name: 'A->B', partitions: [], stepFailure: null, jobs: [] }], failure: () => failure }
    })
    try {
      const address = server.address()
      assert.ok(typeof address === 'object' && address !== null)
      // When /status is read
      const body = await (await fetch(`http://127.0.0.1:${address.port}/status`)).text()
      // Then the message is there, the secret is not, and the document is still JSON
      for (const secret of ['pw-from-a-provider', 'p\\"w', 'w\\\\ 2']) assert.ok(!body.includes(secret), body)
      assert.equal((JSON.parse(body) as { error: string }).error, 'authentication failed for password [redacted], request {"password":"[redacted]"}')
    } finally {
      server.close()
    }
  })
})
