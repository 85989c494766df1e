/**
 * The TLS material and SASL options of a client, prepared once per distinct setting and shared by every client
 * with the same settings (as Java's LoginManager shares one login): stores are read and decrypted once, and one
 * token cache serves all connections. `prepareClientSecurity` runs at start-up, before anything is written, and
 * turns every unusable setting into a ConfigProblem naming `<alias>.<key>`.
 *
 * Invariant: a prepared value holds nothing of the cluster it was first prepared for (two aliases may share it),
 * so its errors never name a cluster; the caller's action does.
 */
import type { ClientProps, ClusterClientConfig } from '../config/types.ts'
import type { ConfigProblem } from '../errors.ts'
import { ClientConfigError } from './client-config-error.ts'
import { saslOptions, type SaslOptions } from './sasl-options.ts'
import { loadTlsMaterial, type TlsMaterial } from './tls-stores.ts'

export interface ClientSecurity {
  readonly tls?: TlsMaterial
  readonly sasl?: SaslOptions
}

const prepared = new Map<string, ClientSecurity>()

function securityKey (props: ClientProps): string {
  const relevant = Object.entries(props)
    .filter(([key]) => key === 'bootstrap.servers' || key === 'security.protocol' || key.startsWith('ssl.') || key.startsWith('sasl.'))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify(relevant)
}

/** The security of `props`, prepared on first use. Throws ClientConfigError. */
export function clientSecurity (props: ClientProps): ClientSecurity {
  const key = securityKey(props)
  const known = prepared.get(key)
  if (known !== undefined) return known
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').trim().toUpperCase()
  const security: ClientSecurity = {
    ...(protocol === 'SSL' || protocol === 'SASL_SSL' ? { tls: loadTlsMaterial(props) } : {}),
    ...(protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL' ? { sasl: saslOptions(props) } : {})
  }
  prepared.set(key, security)
  return security
}

/** Forgets every prepared setting (tests: stores and token caches are read again). */
export function resetClientSecurity (): void {
  prepared.clear()
}

/** Prepares every client of `clusters`; each setting kmirror cannot use becomes a problem naming `<alias>.<key>`. */
export function prepareClientSecurity (clusters: readonly ClusterClientConfig[]): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const seen = new Set<string>()
  for (const cluster of clusters) {
    for (const props of [cluster.admin, cluster.consumer, cluster.producer]) {
      try {
        clientSecurity(props)
      } catch (err) {
        if (!(err instanceof ClientConfigError)) throw err
        const problem = { key: `${cluster.alias}.${err.key}`, message: err.problem }
        const id = `${problem.key}\u0000${problem.message}`
        if (!seen.has(id)) problems.push(problem)
        seen.add(id)
      }
    }
  }
  return problems
}
