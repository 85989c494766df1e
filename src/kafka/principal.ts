/**
 * The Kafka principal kmirror authenticates as, when its client settings tell: for the grant a refused request
 * needs ("grant WRITE on topic A.checkpoints.internal to User:mirror on cluster B") and for the ACL rule that never
 * copies a DENY onto kmirror itself.
 */
import type { ClientProps } from '../config/types.ts'
import { jaasOption } from '../config/jaas.ts'

const NAMED_SASL = new Set(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])

/**
 * `User:<username>` for SASL PLAIN and SCRAM (Kafka's default principal builder uses the SASL user name as it is),
 * `User:ANONYMOUS` for PLAINTEXT, null when only the brokers know (TLS client certificates, GSSAPI, OAUTHBEARER).
 */
export function principalOf (props: ClientProps): string | null {
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').toUpperCase()
  if (protocol === 'PLAINTEXT') return 'User:ANONYMOUS'
  if (protocol !== 'SASL_PLAINTEXT' && protocol !== 'SASL_SSL') return null
  if (!NAMED_SASL.has((props['sasl.mechanism'] ?? 'GSSAPI').toUpperCase())) return null
  const username = jaasOption(props['sasl.jaas.config'] ?? '', 'username')
  return username === undefined ? null : `User:${username}`
}

/** How a message names kmirror's principal on a cluster. */
export function describePrincipal (props: ClientProps, clusterAlias: string): string {
  return principalOf(props) ?? `the principal kmirror authenticates as on cluster ${clusterAlias}`
}
