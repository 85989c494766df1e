/**
 * The benchmark harness still works end to end: `bench/run.ts --size tiny` on the test clusters, every scenario's
 * code path with kmirror, and MM2 and the limit beside it in `bulk` (`--compare bulk`: MM2's start-up, its
 * dedicated mode and the limit's two JVMs are the same code in every scenario, and cost most of the time). The
 * `instances` scenario splits the partitions between two processes and copies no record twice. No timing is
 * asserted: this is not a benchmark.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { ensureClusters, REPO_ROOT } from '../helpers/clusters.ts'
import { writeTempFile } from '../helpers/process.ts'

const SCENARIOS = ['bulk', 'small', 'topics', 'latency', 'eos', 'partitions']

/** The cells of the row named NAME in SECTION (after the figure's name). */
function row (section: string, name: string): string[] {
  const line = section.split('\n').find(l => l.startsWith(`| ${name} |`))
  assert.ok(line, `a row ${name} in:\n${section}`)
  return line.split('|').map(c => c.trim()).slice(2, -1)
}

test('the benchmark runs every scenario at tiny size: kmirror in each, MM2 and the limit beside it in bulk', { timeout: 420_000 }, async t => {
  // Given the test clusters and an output file outside bench/
  const [source, target] = await ensureClusters(['source', 'target'])
  const out = writeTempFile('', '.md', t)

  // When the harness runs every scenario at tiny size on them, comparing with MM2 and the limit in bulk only
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(REPO_ROOT, 'bench', 'run.ts'), '--size', 'tiny', '--compare', 'bulk', '--out', out,
    '--source-bootstrap', source!.bootstrap, '--target-bootstrap', target!.bootstrap
  ], { cwd: REPO_ROOT, timeout: 400_000, maxBuffer: 16 * 1024 * 1024 })

  // Then the results file has a header and, per scenario, a table with kmirror's throughput figures
  assert.ok(existsSync(out))
  const results = readFileSync(out, 'utf8')
  assert.match(results, /- command: `node bench\/run\.ts --size tiny --compare bulk/)
  assert.match(results, /- Kafka \d+\.\d+\.\d+/)
  const sections = new Map(results.split(/^### /m).slice(1).map(s => [s.slice(0, s.indexOf('\n')), s]))
  for (const name of SCENARIOS) {
    const section = sections.get(name)
    assert.ok(section, `a table for ${name}`)
    assert.match(section, /\| figure \| MM2 \| kmirror \| limit \| kmirror\/MM2 \| kmirror\/limit \|/)
    const [mm2, kmirror, limit] = row(section, 'records/s (start → all on target)')
    assert.match(kmirror!, /^[\d,]+$/, `${name}: kmirror records/s`)
    // And MM2 and the limit ran in bulk alone
    assert.match(mm2!, name === 'bulk' ? /^[\d,]+$/ : /^—$/, `${name}: MM2 records/s`)
    assert.match(limit!, name === 'bulk' ? /^[\d,]+$/ : /^—$/, `${name}: limit records/s`)
  }
  assert.match(row(sections.get('latency')!, 'latency p99 (ms)')[1]!, /^\d[\d,]*$/)

  // And `instances` ran two processes that together copied every record once, and timed a join and a kill -9
  const instances = sections.get('instances')
  assert.ok(instances, 'a table for instances')
  assert.match(instances, /\| figure \| 2 instances \|/)
  // (the group settles before the records are written, so the split is even)
  assert.deepEqual(row(instances, 'partitions per instance'), ['12 / 12'])
  assert.deepEqual(row(instances, 'records copied per instance'), ['1,200 / 1,200'])
  assert.deepEqual(row(instances, 'records copied twice, kmirror\'s counters (sum − records)'), ['0'])
  assert.deepEqual(row(instances, 'records on the target (its offsets, after the instances stopped)'), ['2,400'])
  assert.deepEqual(row(instances, 'records copied twice, on the target (partitions holding more than the source)'), ['0 (0 partitions)'])
  assert.deepEqual(row(instances, 'records missing on the target'), ['0'])
  assert.match(row(instances, 'instance 2 joins 1: its start → assignment settled (12 partitions each)')[0]!, /^\d[\d,]*\.\d$/)
  assert.match(instances, /\| kill -9 of one of two → its partitions copied again by the other \(session\.timeout\.ms = 6000\) \| \d+\.\d \|/)

  // And the same tables went to stdout
  assert.match(stdout, /### bulk/)
})
