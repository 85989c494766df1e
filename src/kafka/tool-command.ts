/**
 * The command lines of Kafka's own tools (kafka-acls.sh, kafka-topics.sh, kafka-consumer-groups.sh,
 * kafka-configs.sh) that remedies print. An operator copies them at 3 a.m., so they must run as printed once the
 * placeholders are filled:
 * - each names the cluster's brokers with `--bootstrap-server` (without it every tool stops at "Missing required
 *   argument"), and, on a cluster that is not PLAINTEXT, `--command-config` with a placeholder for the client
 *   properties file kmirror cannot know: an admin's where the tool changes ACLs or deletes offsets, any client's
 *   where it only reads;
 * - placeholders are words in capitals (`ADMIN_PROPERTIES_FILE_OF_B`), never `<...>`: a shell reads `<` and `>` as
 *   redirections;
 * - values from the clusters (group names, principals) are single-quoted when a shell could split or expand them.
 */
import type { ClientProps } from '../config/types.ts'
import { processRedactor } from '../redactor.ts'
import { clusterContext } from './connection-hints.ts'
import { principalOf } from './principal.ts'

/** What a tool needs of the cluster: its alias for placeholders, `bootstrap.servers` and `security.protocol`. */
export interface ToolCluster {
  readonly alias?: string
  /** `bootstrap.servers` as configured (comma-separated, no spaces). */
  readonly brokers?: string
  /** `security.protocol`; unknown counts as PLAINTEXT (every client kmirror opens has one: PLAINTEXT by default). */
  readonly protocol?: string
}

export type KafkaTool = 'kafka-acls.sh' | 'kafka-topics.sh' | 'kafka-consumer-groups.sh' | 'kafka-configs.sh' | 'kafka-transactions.sh'

/** Whose client properties the tool needs: an admin's to change ACLs or delete offsets, any client's to read. */
export type ToolUser = 'ADMIN' | 'CLIENT'

/** `kafka-topics.sh --bootstrap-server b1:9092,b2:9092 [--command-config FILE] ARGS`; kafka-acls.sh as an admin by default. */
export function toolCommand (tool: KafkaTool, cluster: ToolCluster, args: string, user: ToolUser = defaultUser(tool)): string {
  return `${tool} ${toolConnection(tool, cluster, user)} ${args}`
}

/** `--bootstrap-server ... [--command-config ...]`: what TOOL needs to reach CLUSTER (hint texts hold `<connection>` for it). */
export function toolConnection (tool: KafkaTool, cluster: ToolCluster, user: ToolUser = defaultUser(tool)): string {
  const alias = placeholderAlias(cluster.alias)
  // A bootstrap.servers from a config provider is a secret to the redactor: printed, the line would not run.
  const known = cluster.brokers !== undefined && cluster.brokers !== '' && processRedactor.redact(cluster.brokers) === cluster.brokers
  const brokers = known ? shellWord(cluster.brokers!) : `BOOTSTRAP_SERVERS${alias}`
  const secured = cluster.protocol !== undefined && cluster.protocol.toUpperCase() !== 'PLAINTEXT'
  return `--bootstrap-server ${brokers}${secured ? ` --command-config ${user}_PROPERTIES_FILE${alias}` : ''}`
}

/** The `--allow-principal` value: kmirror's principal when its config names it, else a placeholder to fill. */
export function principalArg (principal: string, cluster: ToolCluster): string {
  return principal.startsWith('User:') ? shellWord(principal) : `PRINCIPAL${placeholderAlias(cluster.alias)}`
}

/** VALUE as one shell word: as it is when it holds nothing a shell would read, else single-quoted. */
export function shellWord (value: string): string {
  return /^[A-Za-z0-9._:,@=/+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`
}

/** How tools reach cluster ALIAS as a client with PROPS does, and the principal that client authenticates as. */
export function toolClusterOf (alias: string, props: ClientProps): ToolCluster & { readonly alias: string, readonly principal?: string } {
  const { brokers, protocol } = clusterContext(alias, props)
  const principal = principalOf(props)
  return { alias, ...(principal === null ? {} : { principal }), ...(brokers === undefined ? {} : { brokers }), ...(protocol === undefined ? {} : { protocol }) }
}

function defaultUser (tool: KafkaTool): ToolUser {
  return tool === 'kafka-acls.sh' || tool === 'kafka-configs.sh' ? 'ADMIN' : 'CLIENT'
}

/** `_OF_A` for alias A; aliases are free text, so anything a shell could read as syntax becomes `_`. */
function placeholderAlias (alias: string | undefined): string {
  return alias === undefined || alias === '' ? '' : `_OF_${alias.replace(/[^A-Za-z0-9_.-]/g, '_')}`
}
