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
      'Every other `ssl.*` and `sasl.*` key of the Java client is accepted too; any other `ssl.*` or `sasl.*` key is warned about as unknown (MM2 passes it to no client). ' +
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
- Any value, \`clusters\` and the providers' parameters included, may hold \`\${provider:[path:]key}\` references,
  resolved by the providers declared with \`config.providers\`; only the provider names and classes are read as
  written (docs/operations.md, "Secrets and config providers").

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

const CLIENT_INTRO = 'Set them per cluster and role (`A.consumer.fetch.max.bytes`, `B.producer.compression.type`) or per flow ' +
  '(`A->B.source.consumer.fetch.max.bytes`, `A->B.producer.override.compression.type`), as above. `kmirror validate` checks their values. ' +
  'Other keys of the Java clients are accepted and not used.'

const CLIENT_OUTRO = `The replication producer is always idempotent with \`acks=all\`; \`acks\`, \`enable.idempotence\`, \`batch.size\`
and \`linger.ms\` are not used (batches are the source's, or up to 512 KiB of re-encoded records).`

export function renderConfigDocs (): string {
  const parts = [INTRO.trimEnd()]
  for (const section of SECTIONS) {
    const rows = KEYS.filter(spec => spec.scope === section.scope).map(row)
    parts.push([`## ${section.title}`, '', section.intro, '', '| Key | Default | Meaning | MM2 / kmirror |', '|---|---|---|---|', ...rows].join('\n'))
  }
  const clientRows = KEYS.filter(spec => spec.scope === Scopes.CLIENT_ROLE).map(row)
  parts.push(['## Client keys the data path reads', '', CLIENT_INTRO, '', '| Key | Default | What kmirror does with it | MM2 / kmirror |', '|---|---|---|---|', ...clientRows, '', CLIENT_OUTRO].join('\n'))
  return `${parts.join('\n\n')}\n`
}

function row (spec: KeySpec): string {
  return `| ${keyCell(spec)} | ${defaultCell(spec)} | ${cell(meaning(spec))} | ${cell(status(spec))} |`
}

/** Client keys are written under their role: `consumer.fetch.max.bytes`, `{consumer,producer,admin}.request.timeout.ms`. */
function keyCell (spec: KeySpec): string {
  const roles = spec.roles ?? []
  if (roles.length === 0) return `\`${spec.name}\``
  return `\`${roles.length === 1 ? roles[0] ?? '' : `{${roles.join(',')}}`}.${spec.name}\``
}

function defaultCell (spec: KeySpec): string {
  if (spec.default === null) return spec.name === 'clusters' ? '(required)' : spec.scope === Scopes.CLIENT_ROLE ? '(not set)' : '(none)'
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
