/**
 * deploy/prometheus/alerts.yml and deploy/grafana/kmirror.json name only metrics kmirror exports, and promtool
 * accepts the rules and passes their unit tests (deploy/prometheus/alerts.test.yml).
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { MetricDefinitions, MetricTypes } from '../../../src/metrics/definitions.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'

const ROOT = join(import.meta.dirname, '..', '..', '..')
const ALERTS = join(ROOT, 'deploy', 'prometheus', 'alerts.yml')
const ALERT_TESTS = join(ROOT, 'deploy', 'prometheus', 'alerts.test.yml')
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'kmirror.json')

/** Series Prometheus itself makes for every scrape target. */
const PROMETHEUS_SERIES = new Set(['up'])

/** Every series name kmirror exports: each definition (a histogram's _bucket, _sum and _count) and Node's process metrics. */
async function exportedSeries (): Promise<Set<string>> {
  const names = new Set<string>()
  for (const d of Object.values(MetricDefinitions)) {
    if (d.type === MetricTypes.HISTOGRAM) for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${d.name}${suffix}`)
    else names.add(d.name)
  }
  // The process metrics prom-client adds (kmirror_process_*, kmirror_nodejs_*), as the registry renders them.
  for (const line of (await new PrometheusMetrics().render()).split('\n')) {
    const [, , name, type] = line.split(' ')
    if (!line.startsWith('# TYPE ') || name === undefined || names.has(name)) continue
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
    else names.add(name)
  }
  return names
}

/**
 * Metric names in a PromQL expression (label lists of `by (...)` etc. removed first): identifiers outside strings,
 * label matchers and ranges, neither keywords nor functions (followed by `(`).
 */
function metricNames (expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '')
  const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset',
    // aggregation operators may be written `sum by (x) (...)`: not directly followed by `(`
    'sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values'])
  const names: string[] = []
  for (const m of bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)) {
    const [, name, call] = m
    if (name === undefined || call !== undefined || keywords.has(name) || /^\d/.test(name)) continue
    names.push(name)
  }
  return names
}

/** Label lists of `by (...)`, `on (...)` etc. removed, so only metric names and functions remain. */
function withoutLabelLists (expr: string): string {
  return expr.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1')
}

function alertExpressions (): { alert: string, expr: string }[] {
  const out: { alert: string, expr: string }[] = []
  let alert = ''
  for (const line of readFileSync(ALERTS, 'utf8').split('\n')) {
    const named = /^\s*- alert: (\S+)/.exec(line)
    if (named !== null) alert = named[1]!
    const expr = /^\s*expr: (.+)$/.exec(line)
    if (expr !== null) out.push({ alert, expr: expr[1]! })
  }
  return out
}

function dashboardExpressions (): { panel: string, expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string, targets?: { expr: string }[] }[], templating: { list: { name: string, definition?: string }[] } }
  const out = dashboard.panels.flatMap(p => (p.targets ?? []).map(t => ({ panel: p.title, expr: t.expr })))
  for (const v of dashboard.templating.list) {
    const values = v.definition === undefined ? null : /^label_values\((\w+),/.exec(v.definition)
    if (values !== null) out.push({ panel: `variable ${v.name}`, expr: values[1]! })
  }
  return out
}

function checkNames (where: string, expr: string, exported: ReadonlySet<string>): void {
  const names = metricNames(withoutLabelLists(expr)).filter(n => !PROMETHEUS_SERIES.has(n))
  assert.ok(names.length > 0 || PROMETHEUS_SERIES.has(metricNames(withoutLabelLists(expr))[0] ?? ''), `${where}: names no metric: ${expr}`)
  for (const name of names) assert.ok(exported.has(name), `${where}: ${name} is not a metric kmirror exports (src/metrics/definitions.ts)`)
}

describe('alerts and dashboard', () => {
  it('every alert names only metrics kmirror exports, and has a severity, a summary, a description and a runbook in docs/operations.md', async () => {
    const exported = await exportedSeries()
    const alerts = alertExpressions()
    assert.ok(alerts.length >= 8, 'alerts found')
    for (const { alert, expr } of alerts) checkNames(`alert ${alert}`, expr, exported)
    const text = readFileSync(ALERTS, 'utf8')
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
    for (const { alert } of alerts) {
      const block = text.slice(text.indexOf(`- alert: ${alert}\n`)).split('- alert: ')[1]!
      for (const field of ['severity:', 'summary:', 'description:', 'runbook_url:']) assert.ok(block.includes(field), `${alert} has ${field}`)
      assert.ok(block.includes(`runbook_url: "docs/operations.md#${alert.toLowerCase()}"`), `${alert}: runbook anchor`)
      assert.ok(operations.includes(`### ${alert}\n`), `docs/operations.md has a section "### ${alert}"`)
    }
  })

  it('every dashboard query names only metrics kmirror exports', async () => {
    const exported = await exportedSeries()
    const queries = dashboardExpressions()
    assert.ok(queries.length >= 15, 'queries found')
    for (const { panel, expr } of queries) checkNames(`panel "${panel}"`, expr, exported)
  })

  it('finds an unknown metric (the check itself works)', async () => {
    const exported = await exportedSeries()
    assert.throws(() => checkNames('probe', 'sum by (flow) (rate(kmirror_records_copyed_total[5m]))', exported), /kmirror_records_copyed_total is not a metric/)
    assert.doesNotThrow(() => checkNames('probe', 'histogram_quantile(0.99, sum by (le, flow) (rate(kmirror_replication_latency_ms_bucket{flow=~"$flow"}[5m])))', exported))
  })

  const promtool = spawnSync('promtool', ['--version']).status === 0
  // CI installs Debian's prometheus package (.ci/run); elsewhere the check runs where promtool is installed.
  const missing = promtool ? false : process.env['CI'] === undefined ? 'promtool is not installed (Debian package prometheus)' : false
  it('promtool accepts the rules and passes their unit tests', { skip: missing }, () => {
    assert.ok(promtool, 'promtool is not installed: apt-get install prometheus (.ci/run does)')
    const checked = execFileSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' })
    assert.match(checked, /SUCCESS: \d+ rules found/)
    const tested = spawnSync('promtool', ['test', 'rules', ALERT_TESTS], { encoding: 'utf8' })
    assert.equal(tested.status, 0, `${tested.stdout}${tested.stderr}`)
  })
})
