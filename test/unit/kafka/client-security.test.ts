import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, beforeEach, describe, it } from 'node:test'
import type { ClusterClientConfig } from '../../../src/config/types.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { ClientConfigError } from '../../../src/kafka/client-config-error.ts'
import { clientSecurity, prepareClientSecurity, resetClientSecurity } from '../../../src/kafka/client-security.ts'
import { toKmirrorError } from '../../../src/kafka/errors.ts'

const dir = mkdtempSync(join(tmpdir(), 'kmirror-client-security-'))
after(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(() => resetClientSecurity())

const cluster = (alias: string, props: Record<string, string>): ClusterClientConfig => ({ alias, bootstrapServers: [props['bootstrap.servers'] ?? ''], admin: props, consumer: props, producer: props })

describe('clientSecurity', () => {
  it('names no cluster in the errors of settings two clusters share; the caller\'s action names the one that failed, once', async () => {
    // Given clusters A and B with the same OAUTHBEARER settings (two aliases of one cluster), A prepared first
    const props = {
      'bootstrap.servers': 'shared:9092', 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'OAUTHBEARER',
      'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
      'sasl.oauthbearer.token.endpoint.url': 'http://127.0.0.1:1/token', 'sasl.login.retry.backoff.max.ms': '0',
      'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" clientSecret="secret";'
    }
    assert.deepEqual(prepareClientSecurity([cluster('A', props), cluster('B', props)]), [])
    // When a connection of B asks for a token and the endpoint cannot be reached
    const token = clientSecurity(props).sasl?.token as () => Promise<string>
    const err = await token().then(() => undefined, (e: unknown) => e)
    // Then the error names the endpoint and no cluster (not A, whose preparation made the token cache)
    assert.ok(err instanceof KmirrorError)
    assert.match(err.message, /^the OAUTHBEARER token endpoint http:\/\/127\.0\.0\.1:1\/token could not be reached/)
    // And wrapped by B's start-up check, the message names B exactly once
    const wrapped = toKmirrorError(new Error('Connection failed.', { cause: err }), ErrorCodes.CLUSTER_UNREACHABLE, 'check the brokers of cluster B (shared:9092)')
    assert.equal(wrapped.code, ErrorCodes.AUTHENTICATION)
    assert.equal(wrapped.message.match(/cluster [AB]\b/g)?.join(), 'cluster B', wrapped.message)
  })

  it('reads stores once per setting until reset', () => {
    const truststore = join(dir, 'ca.pem')
    copyFileSync(resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls', 'ca.pem'), truststore)
    const props = { 'bootstrap.servers': 'a:9092', 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': truststore }
    assert.equal(clientSecurity(props).tls?.ca?.length, 1)
    writeFileSync(truststore, 'no certificate here')
    assert.equal(clientSecurity(props).tls?.ca?.length, 1, 'prepared once')
    resetClientSecurity()
    assert.throws(() => clientSecurity(props), (e: unknown) => e instanceof ClientConfigError && e.key === 'ssl.truststore.location')
  })
})
