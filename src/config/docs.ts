/**
 * docs/config.md, rendered from the schema table (written by scripts/gen-config-docs.ts, checked by a unit test).
 */
import { KEYS, Origins, Scopes, type KeySpec, type Scope } from './schema.ts'

const SECTIONS: ReadonlyArray<{ scope: Scope, title: string, intro: string }> = [
  { scope: Scopes.TOP_LEVEL, title: 'Top-level keys', intro: 'Written once, without a prefix.' },
  {
    scope: Scopes.CONNECTOR,
    title: 'Flow keys',
    intro: 'MM2\'s connector settings. At top level they are the default for every flow; `A->B.<key>` overrides them for one flow. ' +
      'Keys marked "per flow only" are dropped by MM2 at top level.'
  },
  {
    scope: Scopes.WORKER,
    title: 'Worker keys',
    intro: 'Connect worker settings, written per target cluster: `B.offset.flush.interval.ms` applies to every flow into B. ' +
      'MM2 also passes top-level `offset.storage*`, `config.storage*`, `status.storage*`, converter, `task*` and `worker*` keys to every worker, and those win over `B.<key>`.'
  },
  {
    scope: Scopes.CLUSTER,
    title: 'Cluster keys',
    intro: 'How to reach a cluster: `A.<key>` for cluster A, or top level as the default for every cluster. ' +
      'Every other `ssl.*` and `sasl.*` key of the Java client is accepted too. ' +
      'Per client role: `A.consumer.<key>`, `A.producer.<key>`, `A.admin.<key>`.'
  }
]

const INTRO = `# kmirror configuration

<!-- Generated from src/config/schema.ts by scripts/gen-config-docs.ts. Do not edit: run \`node scripts/gen-config-docs.ts\`. -->

kmirror reads MirrorMaker 2's \`mm2.properties\` unchanged and resolves it exactly as MM2 does.

## File format

A Java \`.properties\` file, read as \`java.util.Properties\` reads it (ISO-8859-1; use \`\\uXXXX\` for other characters):

- \`key = value\`, \`key=value\` and \`key: value\` are equivalent.
- \`#\` and \`!\` start a comment only at the start of a line: in \`topics = a # note\` the value is \`a # note\`.
- A \`\\\` at the end of a line continues the value on the next line.
- Lists are split at commas, with the spaces around them removed; an empty value is an empty list.
- Regex lists (\`topics\`, \`groups\`, ...) hold Java regular expressions, each matched against the whole name.

## Precedence

For a flow \`A->B\`, later wins:

1. Top-level keys (only the connector keys below; others are dropped, as MM2 drops them).
2. Cluster keys of A (the source) and B (the target).
3. \`A->B.<key>\`.

\`A->B.enabled\` is false unless set to \`true\`. Client settings of each role are built as in MM2:
\`A.security.protocol\`, \`A.ssl.*\`, \`A.sasl.*\` and \`A.bootstrap.servers\` (or the top-level ones) apply to every client of A,
then \`A.consumer.*\` / \`A.producer.*\` / \`A.admin.*\`, then \`A->B.consumer.*\` and \`A->B.source.consumer.*\` and so on.
Run \`kmirror validate mm2.properties\` to see the result with secrets redacted.
`

/** Java client keys the replication data path reads, and where kmirror differs from the Java client. */
const CLIENT_KEYS = `## Client keys the data path reads

Set them per cluster and role as above (\`B.producer.compression.type\`, \`A.consumer.fetch.max.bytes\`).

| Key | Default | What kmirror does with it |
|---|---|---|
| \`consumer.isolation.level\` | \`read_committed\` | As MM2: aborted transactions are not copied. \`read_uncommitted\` copies everything. |
| \`consumer.fetch.max.bytes\` | \`52428800\` | Bytes per fetch response from one broker. |
| \`consumer.max.partition.fetch.bytes\` | \`1048576\` | Bytes per partition per fetch. A larger first batch is still returned whole. |
| \`consumer.fetch.max.wait.ms\` | \`500\` | How long a broker holds a fetch when there is nothing new. |
| \`consumer.auto.offset.reset\` | \`earliest\` | Where a partition without stored progress starts. |
| \`producer.compression.type\` | (not set) | **Differs from MM2.** Not set: each source batch is forwarded with its own codec (an lz4 batch stays lz4), no recompression; MM2 would write uncompressed (the Java default \`none\`). Set (also to \`none\`): batches with another codec are decoded and re-encoded with this one. |
| \`producer.max.in.flight.requests.per.connection\` | \`5\` | Produce requests in flight per target broker, at most 5 (the idempotence window). |
| \`producer.max.request.size\` | \`1048576\` | A produce request is closed at 4× this many bytes of batches; a single batch is never split (the broker checks \`max.message.bytes\`). |
| \`producer.request.timeout.ms\` | \`30000\` | Produce timeout; a timed-out request is retried with a fresh producer id (may duplicate, never skips). |

The replication producer is always idempotent with \`acks=all\`; \`acks\`, \`enable.idempotence\`, \`batch.size\`
and \`linger.ms\` are not used (batches are the source's, or up to 512 KiB of re-encoded records).`

export function renderConfigDocs (): string {
  const parts = [INTRO.trimEnd()]
  for (const section of SECTIONS) {
    const rows = KEYS.filter(spec => spec.scope === section.scope).map(row)
    parts.push([`## ${section.title}`, '', section.intro, '', '| Key | Default | Meaning | MM2 / kmirror |', '|---|---|---|---|', ...rows].join('\n'))
  }
  parts.push(CLIENT_KEYS)
  return `${parts.join('\n\n')}\n`
}

function row (spec: KeySpec): string {
  return `| \`${spec.name}\` | ${defaultCell(spec)} | ${cell(meaning(spec))} | ${cell(status(spec))} |`
}

function defaultCell (spec: KeySpec): string {
  if (spec.default === null) return spec.name === 'clusters' ? '(required)' : '(none)'
  if (spec.default === '') return '(empty)'
  return `\`${cell(spec.default)}\``
}

function meaning (spec: KeySpec): string {
  const values = spec.values === undefined ? '' : ` One of: ${spec.values.join(', ')}.`
  return `${spec.doc}${values}`
}

function status (spec: KeySpec): string {
  const origin = { [Origins.MM2]: 'MM2', [Origins.CONNECT]: 'Connect', [Origins.CLIENT]: 'Kafka client', [Origins.KMIRROR]: 'kmirror only' }[spec.origin]
  const notes = [origin]
  if (spec.perFlowOnly === true) notes.push('per flow only')
  if (spec.mm2Default !== undefined) notes.push(`kmirror default differs (MM2: \`${spec.mm2Default}\`)`)
  if (spec.topLevelExtension === true) notes.push('kmirror also reads it at top level')
  if (spec.renamedTo !== undefined) notes.push(`renamed: use \`${spec.renamedTo}\``)
  if (spec.ignored !== undefined) notes.push(`ignored by kmirror: ${spec.ignored}`)
  return notes.join('; ')
}

/** Table cells cannot hold `|` or line breaks. */
function cell (text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ')
}
