/**
 * What the operator reads when a cluster cannot be reached: the cause named (from real Node TLS and socket errors,
 * wrapped as the Kafka library wraps them) and the key to fix, with the cluster's alias.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { connect, createServer, type ConnectionOptions, type Server, type TlsOptions } from 'node:tls'
import { NetworkError } from '@platformatic/kafka'
import { ErrorCodes } from '../../../src/errors.ts'
import { kafkaErrorHint, toKmirrorError } from '../../../src/kafka/errors.ts'

const fixture = (name: string): string => readFileSync(resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls', name), 'utf8')
const ACTION = 'check the brokers of cluster A (127.0.0.1:9093)'

/** The error Node gives a TLS client of `port` with these options. */
async function tlsError (port: number, options: ConnectionOptions): Promise<Error> {
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

  /** The error a TLS 1.2 client with CLIENT options gets from a TLS 1.2 server with SERVER options (its certificate trusted). */
  async function handshakeError (serverOptions: TlsOptions, clientOptions: ConnectionOptions): Promise<Error> {
    const strict = createServer({ cert: fixture('endpoint.pem'), key: fixture('endpoint-key.pem'), maxVersion: 'TLSv1.2', ...serverOptions }, socket => socket.end())
    strict.on('tlsClientError', () => undefined)
    await new Promise<void>(done => strict.listen(0, '127.0.0.1', done))
    try {
      return await tlsError((strict.address() as AddressInfo).port, { ca: fixture('other-ca.pem'), ...clientOptions })
    } finally {
      strict.close()
    }
  }

  it('Given a broker that ends the TLS handshake (no cipher suite in common), then the hint names both causes of a handshake failure: the client certificate and the TLS versions and cipher suites', async () => {
    const cause = await handshakeError({ ciphers: 'ECDHE-RSA-AES128-SHA' }, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' })
    const err = toKmirrorError(failed(cause), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SSL' })
    assert.match(err.message, /; the broker ended the TLS handshake \(ERR_SSL_[A-Z/0-9]+_ALERT_HANDSHAKE_FAILURE: [^)]*\): it wants a client certificate or refused kmirror's \(set A\.ssl\.keystore\.location \(or A\.ssl\.keystore\.key\) to a key and certificate the brokers' truststore trusts\), or it shares no cipher suite or TLS version with kmirror \(kmirror speaks TLS 1\.2 and 1\.3 with OpenSSL's default cipher suites: check the brokers' ssl\.enabled\.protocols and ssl\.cipher\.suites\)$/)
  })

  it('Given a TLS 1.2 broker that wants a client certificate and gets none, then the hint names the keystore keys', async () => {
    const cause = await handshakeError({ requestCert: true, rejectUnauthorized: true, ca: fixture('ca.pem') }, { maxVersion: 'TLSv1.2' })
    const err = toKmirrorError(failed(cause), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SSL' })
    assert.match(err.message, /it wants a client certificate or refused kmirror's \(set A\.ssl\.keystore\.location/)
  })

  it('Given a broker that speaks only a TLS version kmirror does not offer, then the hint names the TLS versions', async () => {
    const cause = await handshakeError({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }, { maxVersion: 'TLSv1.2' })
    const err = toKmirrorError(failed(cause), ErrorCodes.CLUSTER_UNREACHABLE, ACTION, { alias: 'A', protocol: 'SSL' })
    assert.match(err.message, /; the broker and kmirror share no TLS version or cipher suite \(ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: [^)]*\): kmirror speaks TLS 1\.2 and 1\.3 with OpenSSL's default cipher suites: check the brokers' ssl\.enabled\.protocols and ssl\.cipher\.suites$/)
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
    assert.equal(kafkaErrorHint('SASL_AUTHENTICATION_FAILED', { alias: 'A' }), 'check A.sasl.mechanism and the username and password in A.sasl.jaas.config')
    assert.equal(kafkaErrorHint('SASL_AUTHENTICATION_FAILED'), 'check sasl.mechanism and the username and password in sasl.jaas.config')
  })
})
