/**
 * Bad configuration: kmirror exits 2 with a message naming the problem, and writes nothing to any cluster.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { listTopics } from '../helpers/kafka.ts'
import { getCluster } from '../helpers/clusters.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'

const source = getCluster('source').bootstrap
const target = getCluster('target').bootstrap

// Unique aliases: had kmirror written anything, it would have created topics named after them
// (mm2-offsets.<source>.internal, <source>.<topic>, mm2-offset-syncs.<target>.internal), which the test would see.
const S = `src${randomBytes(3).toString('hex')}`
const T = `dst${randomBytes(3).toString('hex')}`

const CASES: { name: string, lines: string[], expect: RegExp }[] = [
  {
    name: 'a missing bootstrap',
    lines: [`clusters = ${S}, ${T}`, `${S}.bootstrap.servers = ${source}`, `${S}->${T}.enabled = true`],
    expect: new RegExp(`${T}\\.bootstrap\\.servers`)
  },
  {
    name: 'an unknown cluster alias in a flow',
    lines: [`clusters = ${S}, ${T}`, `${S}.bootstrap.servers = ${source}`, `${T}.bootstrap.servers = ${target}`, `${S}->${T}.enabled = true`, `${S}->C.enabled = true`],
    expect: new RegExp(`${S}->C\\.enabled[^\\n]*\\bC\\b`)
  },
  {
    name: 'an invalid regex',
    lines: [`clusters = ${S}, ${T}`, `${S}.bootstrap.servers = ${source}`, `${T}.bootstrap.servers = ${target}`, `${S}->${T}.enabled = true`, `${S}->${T}.topics = orders[0-9`],
    expect: /topics[^\n]*orders\[0-9/
  },
  {
    name: 'a malformed line',
    lines: [`clusters = ${S}, ${T}`, `${S}.bootstrap.servers = ${source}`, `${T}.bootstrap.servers = ${target}`, `${S}->${T}.enabled = true`, 'this line is not a property'],
    expect: /line 5/
  },
  {
    name: 'a malformed \\u escape (it used to crash as an internal error, exit 4)',
    lines: [`clusters = ${S}, ${T}`, `${S}.bootstrap.servers = ${source}`, `${T}.bootstrap.servers = ${target}`, `${S}->${T}.enabled = true`, `${S}->${T}.topics = orders\\uZZ12`],
    // The column, never the characters after \u: they may be part of a password
    expect: /line 5: malformed \\uXXXX escape at column \d+ \(/
  }
]

for (const c of CASES) {
  test(`${c.name} exits 2, names the problem and creates no topic`, { timeout: 60_000 }, async t => {
    // Given the topics on both clusters before
    const before = { source: (await listTopics('source')).sort(), target: (await listTopics('target')).sort() }
    const file = writeTempFile(c.lines.map(l => `${l}\n`).join(''), '.properties', t)
    // When kmirror runs on the bad file
    const kmirror = spawnKmirror(['run', file], { t })
    const exit = await kmirror.waitForExit(30_000)
    // Then it exits 2 with the problem named, and no topic was created anywhere
    assert.equal(exit.code, 2, `exit ${JSON.stringify(exit)}; stderr:\n${kmirror.stderr}`)
    assert.match(kmirror.stderr, c.expect)
    // (no new topic: one an earlier file deleted may still leave the listing meanwhile, which is not kmirror's doing)
    assert.deepEqual({ source: (await listTopics('source')).filter(n => !before.source.includes(n)), target: (await listTopics('target')).filter(n => !before.target.includes(n)) }, { source: [], target: [] })
  })
}

test('validate prints the resolved flows with secrets redacted', { timeout: 30_000 }, async t => {
  const file = writeTempFile([
    'clusters = A, B', `A.bootstrap.servers = ${source}`, `B.bootstrap.servers = ${target}`, 'A->B.enabled = true',
    'B.security.protocol = SASL_PLAINTEXT', 'B.sasl.mechanism = PLAIN',
    'B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s3cr3t-value";'
  ].join('\n'), '.properties', t)
  const kmirror = spawnKmirror(['validate', file], { t })
  const exit = await kmirror.waitForExit(30_000)
  assert.equal(exit.code, 0, kmirror.stderr)
  assert.match(kmirror.stdout, /A->B/)
  assert.doesNotMatch(kmirror.stdout, /s3cr3t-value/)
})
