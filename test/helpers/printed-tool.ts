/**
 * Runs a Kafka tool line that kmirror printed as the fix (`kafka-acls.sh --bootstrap-server ... --add ...`), the
 * way an operator copies it: taken from the text as printed, its capitalised placeholders (`ADMIN_PROPERTIES_FILE_OF_A`)
 * replaced by what the operator knows, then run with kafka-local.sh's `tool` command (the brokers' own jars).
 * A test that does this proves the line runs as printed, not only that it reads right.
 */
import { runKafkaLocal, SECURE_ADMIN } from './clusters.ts'
import type { Cleanup } from './kafka-clients.ts'
import { writeTempFile } from './process.ts'

const TOOLS: Readonly<Record<string, string>> = { 'kafka-acls.sh': 'acls', 'kafka-topics.sh': 'topics', 'kafka-consumer-groups.sh': 'groups', 'kafka-transactions.sh': 'transactions' }

/**
 * The first tool line in a text: it ends where the remedy's sentence goes on (`;` or `)` around it), outside the
 * single quotes kmirror puts around values a shell would split.
 */
const LINE = /(kafka-(?:acls|topics|consumer-groups|transactions)\.sh) ((?:'[^']*'|[^;)'])*)/

/** Every tool line TEXT holds, in order (a remedy may print two: see, then fix). */
export function printedToolLines (text: string): string[] {
  return [...text.matchAll(new RegExp(LINE.source, 'g'))].map(m => m[0])
}

/** The tool line TEXT holds, split into the tool and its arguments as a shell would (throws naming TEXT when there is none). */
export function printedToolLine (text: string): { tool: string, args: string[] } {
  const found = LINE.exec(text)
  if (found === null) throw new Error(`no Kafka tool line in: ${text}`)
  const args = [...found[2]!.trim().matchAll(/(?:'[^']*'|[^\s'])+/g)].map(m => m[0].replace(/'([^']*)'/g, '$1'))
  return { tool: found[1]!, args }
}

/** Runs the tool line in TEXT with FILL's values for its placeholders; resolves with the tool's output. */
export async function runPrintedTool (text: string, fill: Readonly<Record<string, string>> = {}): Promise<string> {
  const { tool, args } = printedToolLine(text)
  const filled = args.map(a => fill[a] ?? a)
  const left = filled.filter(a => /^[A-Z][A-Z_]+_OF_|^(BOOTSTRAP_SERVERS|PRINCIPAL)$/.test(a))
  if (left.length > 0) throw new Error(`placeholders without a value (${left.join(', ')}) in: ${tool} ${args.join(' ')}`)
  return await runKafkaLocal(['tool', TOOLS[tool]!, ...filled])
}

/** A client properties file for the `secure` clusters' super user: what an operator fills ADMIN_PROPERTIES_FILE_OF_<alias> with. */
export function secureAdminProperties (t: Cleanup): string {
  return writeTempFile([
    'security.protocol=SASL_PLAINTEXT',
    'sasl.mechanism=PLAIN',
    `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${SECURE_ADMIN.username}" password="${SECURE_ADMIN.password}";`,
    ''
  ].join('\n'), '.properties', t)
}
