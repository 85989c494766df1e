import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startHttpServer } from '../../../src/http/server.ts'
import { silentLogger } from '../../../src/logger.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import { processRedactor } from '../../../src/redactor.ts'

describe('/status', () => {
  it('never shows a secret of the configuration, even inside the error that stopped replication', async () => {
    // Given a loaded configuration's secret, and a failure whose message quotes it
    processRedactor.add(['pw-from-a-provider'])
    const failure = new Error('authentication failed for password pw-from-a-provider')
    const server = await startHttpServer({
      host: '127.0.0.1', port: 0, metrics: new PrometheusMetrics(), log: silentLogger(),
      source: { status: () => [{ name: 'A->B', partitions: [], jobs: [] }], failure: () => failure }
    })
    try {
      const address = server.address()
      assert.ok(typeof address === 'object' && address !== null)
      // When /status is read
      const body = await (await fetch(`http://127.0.0.1:${address.port}/status`)).text()
      // Then the message is there, the secret is not, and the document is still JSON
      assert.ok(!body.includes('pw-from-a-provider'), body)
      assert.equal((JSON.parse(body) as { error: string }).error, 'authentication failed for password [redacted]')
    } finally {
      server.close()
    }
  })
})
