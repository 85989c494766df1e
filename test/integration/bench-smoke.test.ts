/**
 * The benchmark harness still works end to end: `bench/run.ts --size tiny` on the test clusters, every
 * scenario, with MM2 and kmirror figures in each table. No timing is asserted: this is not a benchmark.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { ensureClusters, REPO_ROOT } from '../helpers/clusters.ts'
import { writeTempFile } from '../helpers/process.ts'

const SCENARIOS = ['bulk', 'small', 'topics', 'latency', 'partitions']

test('the benchmark runs every scenario at tiny size and reports MM2 and kmirror side by side', { timeout: 420_000 }, async t => {
  // Given the test clusters and an output file outside bench/
  const [source, target] = await ensureClusters(['source', 'target'])
  const out = writeTempFile('', '.md', t)

  // When the harness runs every scenario at tiny size on them
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(REPO_ROOT, 'bench', 'run.ts'), '--size', 'tiny', '--out', out,
    '--source-bootstrap', source!.bootstrap, '--target-bootstrap', target!.bootstrap
  ], { cwd: REPO_ROOT, timeout: 400_000, maxBuffer: 16 * 1024 * 1024 })

  // Then the results file has a header and, per scenario, a table with both tools' throughput figures
  assert.ok(existsSync(out))
  const results = readFileSync(out, 'utf8')
  assert.match(results, /- command: `node bench\/run\.ts --size tiny/)
  assert.match(results, /- Kafka \d+\.\d+\.\d+/)
  for (const name of SCENARIOS) {
    const section = results.split(/^### /m).find(s => s.startsWith(`${name}\n`))
    assert.ok(section, `a table for ${name}`)
    assert.match(section, /\| figure \| MM2 \| kmirror \| limit \| kmirror\/MM2 \| kmirror\/limit \|/)
    const rate = section.split('\n').find(l => l.startsWith('| records/s (start → all on target) |'))
    assert.ok(rate, `${name}: a records/s row`)
    const [, mm2, kmirror] = rate.split('|').map(c => c.trim()).slice(1)
    assert.match(mm2!, /^[\d,]+$/, `${name}: MM2 records/s`)
    assert.match(kmirror!, /^[\d,]+$/, `${name}: kmirror records/s`)
  }
  assert.match(results.split(/^### /m).find(s => s.startsWith('latency\n'))!, /\| latency p99 \(ms\) \| \d[\d,]* \| \d[\d,]* \|/)
  // And the same tables went to stdout
  assert.match(stdout, /### bulk/)
})
