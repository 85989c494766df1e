/**
 * `sasl.mechanism` and `sasl.jaas.config` (as MM2 users write them for the Java client) to the library's SASL
 * options. PLAIN and SCRAM take the JAAS username and password; OAUTHBEARER is read by oauth-options.ts.
 * A refusal by the broker becomes a KmirrorError (AUTHENTICATION) naming the mechanism, the user and the broker,
 * never a secret, and not the cluster: the options are shared by every cluster with the same settings, and the
 * caller's action names the cluster ("check the brokers of cluster A: ...").
 */
import type { ConnectionOptions } from '@platformatic/kafka'
import { saslPlain, saslScramSha } from '@platformatic/kafka'
import { SASL_MECHANISMS } from '../config/schema.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClientConfigError } from './client-config-error.ts'
import { kafkaErrorNames } from './errors.ts'
import { parseJaasConfig, type JaasEntry } from '../config/jaas.ts'
import { oauthOptions } from './oauth-options.ts'

export type SaslOptions = NonNullable<ConnectionOptions['sasl']>

type PasswordMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'

/** The library's SASL options for `props`. Throws ClientConfigError naming the key to fix. */
export function saslOptions (props: ClientProps): SaslOptions {
  const mechanism = (props['sasl.mechanism'] ?? 'GSSAPI').trim()
  if (!isSupported(mechanism)) {
    throw new ClientConfigError('sasl.mechanism', `is ${mechanism}, which kmirror does not support${mechanism === 'GSSAPI' ? ' (GSSAPI is the Java default when sasl.mechanism is not set)' : ''}: use ${SASL_MECHANISMS.join(', ')}`)
  }
  const jaas = jaasEntry(props, mechanism)
  if (mechanism === 'OAUTHBEARER') return oauthOptions(props, jaas)
  const { username, password } = jaas.options
  if (username === undefined || password === undefined) {
    throw new ClientConfigError('sasl.jaas.config', `must name username="..." and password="..." for SASL/${mechanism}`)
  }
  return { mechanism, username, password, authenticate: passwordAuthenticator(mechanism, username) }
}

function isSupported (mechanism: string): mechanism is (typeof SASL_MECHANISMS)[number] {
  return (SASL_MECHANISMS as readonly string[]).includes(mechanism)
}

function jaasEntry (props: ClientProps, mechanism: string): JaasEntry {
  const text = props['sasl.jaas.config']
  if (text === undefined || text.trim() === '') {
    throw new ClientConfigError('sasl.jaas.config', `is not set: SASL/${mechanism} needs a JAAS line such as ${exampleJaas(mechanism)}`)
  }
  const parsed = parseJaasConfig(text)
  if ('problem' in parsed) throw new ClientConfigError('sasl.jaas.config', `is not a JAAS config Kafka reads (${parsed.problem}): write <LoginModule> required name="value" ...;, e.g. ${exampleJaas(mechanism)}`)
  // Kafka's JaasContext refuses what its JaasConfig reads when it holds more than one login module.
  if (parsed.entries.length > 1) {
    throw new ClientConfigError('sasl.jaas.config', `has ${parsed.entries.length} login modules (entries ending with ;), and Kafka clients take exactly one: keep only the SASL/${mechanism} login module, e.g. ${exampleJaas(mechanism)} (an unquoted value with a ; in it also splits an entry: quote it)`)
  }
  const entry = parsed.entries[0] as JaasEntry
  if (mechanism === 'OAUTHBEARER' && entry.nullNamedOption) {
    // Java's OAUTHBEARER login handlers read every option name, and fail (NullPointerException) on a null one.
    throw new ClientConfigError('sasl.jaas.config', 'has an option whose name Java reads as null (a name that is no word, as in @=x or 1=x, often the rest of an unquoted value), on which Java\'s OAUTHBEARER login fails: remove it, or quote the value it belongs to')
  }
  return entry
}

function exampleJaas (mechanism: string): string {
  if (mechanism === 'OAUTHBEARER') return 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="..." clientSecret="...";'
  const module = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule'
  return `${module} required username="..." password="...";`
}

type Authenticator = NonNullable<SaslOptions['authenticate']>
type AuthenticateCallback = Parameters<Authenticator>[6]

/** The library's PLAIN/SCRAM exchange, with a refusal turned into an error naming the mechanism, user and broker. */
function passwordAuthenticator (mechanism: PasswordMechanism, username: string): Authenticator {
  return (_mechanism, connection, authenticate, user, password, _token, callback) => {
    const done: AuthenticateCallback = (error, response) => {
      if (error === null || error === undefined) {
        callback(null, response)
        return
      }
      if (!kafkaErrorNames(error).includes('SASL_AUTHENTICATION_FAILED')) {
        callback(error)
        return
      }
      const broker = `${connection.host ?? '?'}:${connection.port ?? '?'}`
      callback(new KmirrorError(ErrorCodes.AUTHENTICATION, `the broker at ${broker} refused SASL/${mechanism} authentication of user ${JSON.stringify(username)}: check the username and password in sasl.jaas.config, and that the user exists for ${mechanism}`, { cause: error, retriable: true }))
    }
    if (mechanism === 'PLAIN') saslPlain.authenticate(authenticate, connection, user ?? '', password ?? '', done)
    else saslScramSha.authenticate(authenticate, connection, mechanism === 'SCRAM-SHA-512' ? 'SHA-512' : 'SHA-256', user ?? '', password ?? '', saslScramSha.defaultCrypto, done)
  }
}
