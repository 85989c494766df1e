/**
 * What the operator reads when a cluster cannot be reached: the cause named (from real Node TLS and socket errors,
 * wrapped as the Kafka library wraps them) and the key to fix, with the cluster's alias.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { connect, createServer, type Server } from 'node:tls'
import { NetworkError } from '@platformatic/kafka'
import { ErrorCodes } from '../../../src/errors.ts'
import { kafkaErrorHint, toKmirrorError } from '../../../src/kafka/errors.ts'

const fixture = (name: string): string => readFileSync(resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls', name), 'utf8')
const ACTION = 'check the brokers of cluster A (127.0.0.1:9093)'

/** The error Node gives a TLS client of `port` with these options. */
async function tlsError (port: number, options: { ca?: string, servername?: string }): Promise<Error> {
  return await new Promise(resolve => {
    const socket = connect({ host: '127.0.0.1', port, ...options }, () => { socket.destroy(); resolve(new Error('connected')) })
    socket.on('error', resolve)
  })
}

/** As the library reports a failed connection. */
const failed = (cause: Error): Error => new NetworkError('Connection to 127.0.0.1:9093 failed.', { cause })

describe('toKmirrorError: connection failures name their cause and the key to fix', () => {
  let server: Server
  let port = 0
  before(async () => {
    // A TLS server whose certificate names only 127.0.0.1 and is issued by other-ca.pem
    server = createServer({ cert: fixture('endpoint.pem'), key: fixture('endpoint-key.pem') }, socket => socket.end())
    await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
    port = (server.address() as AddressInfo).port
  })
  after(() => server.close())

  it('names a broker certificate signed by a CA the truststore does not hold, and the truststore keys', async () => {
    const err = toKmirrorError(failed(await tlsError(port, {})), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SSL' })
    assert.equal(err.code, ErrorCodes.CLUSTER_UNREACHABLE)
    assert.equal(err.message, `${ACTION}: Connection to 127.0.0.1:9093 failed.; the broker's TLS certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate): set A.ssl.truststore.location (or A.ssl.truststore.certificates) to the CA that issued the brokers' certificates`)
  })

  it('names a host name the broker certificate does not hold, and both ways out', async () => {
    const err = toKmirrorError(failed(await tlsError(port, { ca: fixture('other-ca.pem'), servername: 'kafka.example' })), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SASL_SSL' })
    assert.match(err.message, /; the broker's TLS certificate does not name the host kmirror connected to \(ERR_TLS_CERT_ALTNAME_INVALID: Hostname\/IP does not match certificate's altnames: Host: kafka\.example\. [^)]*127\.0\.0\.1\): write in A\.bootstrap\.servers a host name the certificate holds .* or turn host-name verification off with A\.ssl\.endpoint\.identification\.algorithm = \(empty\)$/)
  })

  it('names a refused connection and the bootstrap servers, without the TLS client-certificate remark on PLAINTEXT', async () => {
    const closed = createNetServer()
    await new Promise<void>(done => closed.listen(0, '127.0.0.1', done))
    const free = (closed.address() as AddressInfo).port
    await new Promise(done => closed.close(done))
    const refused = await new Promise<Error>(done => { connect({ host: '127.0.0.1', port: free }).on('error', done) })
    const err = toKmirrorError(failed(refused), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'PLAINTEXT' })
    assert.match(err.message, new RegExp(`; nothing accepts connections there \\(ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${free}\\): check A\\.bootstrap\\.servers and that the brokers run$`))
  })

  it('mentions client certificates for a connection closed without a cause only on TLS listeners', () => {
    const closed = new NetworkError('Connection closed')
    const tls = toKmirrorError(closed, ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SSL' })
    assert.match(tls.message, /check A\.bootstrap\.servers, that the cluster is reachable from here, and that A\.security\.protocol matches the listener \(a listener with ssl\.client\.auth=required closes TLS connections without a client certificate: set A\.ssl\.keystore\.location\)$/)
    const plain = toKmirrorError(closed, ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'PLAINTEXT' })
    assert.equal(plain.message, `${ACTION}: Connection closed; check A.bootstrap.servers, that the cluster is reachable from here, and that A.security.protocol matches the listener`)
    const unknown = toKmirrorError(closed, ErrorCodes.CLUSTER_UNREACHABLE, ACTION)
    assert.equal(unknown.message.includes('ssl.client.auth'), false)
  })

  it('writes the real alias into Kafka error hints, and no placeholder without one', () => {
    assert.equal(kafkaErrorHint('SASL_AUTHENTICATION_FAILED', 'A'), 'check A.sasl.mechanism and the username and password in A.sasl.jaas.config')
    assert.equal(kafkaErrorHint('SASL_AUTHENTICATION_FAILED'), 'check sasl.mechanism and the username and password in sasl.jaas.config')
  })
})
