/**
 * The web console (issue 12), in a real headless Chromium (Debian's `chromium`, driven by playwright-core) against
 * kmirror copying between real clusters: the page shows the flow, its topics, a lag that changes as records
 * arrive and goes back to 0, the partitions' positions and high watermarks, a partition whose READ is denied by an
 * ACL in red with the grant to add, and the topology drawn. A screenshot of every run is kept in
 * .state/artifacts/console-*.png (under KMIRROR_STATE: `.state/lane-N/` when its lane is not the first).
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { createAcls } from '../helpers/acls.ts'
import { launchBrowser, waitForText } from '../helpers/browser.ts'
import { ensureClusters, getCluster, REPO_ROOT } from '../helpers/clusters.ts'
import { createTopic, endOffsets, openTransaction, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

/** The browser's own, for the functions run in the page (this project's TypeScript has no DOM types). */
declare const getComputedStyle: (element: unknown) => { color: string, backgroundColor: string }
declare const document: { querySelector: (selector: string) => unknown }

function records (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

test('the console shows the flow and its topics, a lag that changes as records arrive, positions, a partition denied by an ACL in red, and the topology, and keeps a text selection across refreshes', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given three topics on the authorizer cluster: kmirror (alice) may read `open`, only describe `denied`, and not
  // read the configs of `unread` (its remote topic is not created without them)
  const [open, denied, unread] = [uniqueName('console-open'), uniqueName('console-denied'), uniqueName('console-unread')]
  await Promise.all([open, denied, unread].map(topic => createTopic('secure', topic, { partitions: 1, t })))
  const grant = (topic: string, operation: AclBinding['operation']): AclBinding =>
    ({ resourceType: 'topic', resourceName: topic, patternType: 'literal', principal: 'User:alice', host: '*', operation, permission: 'allow' })
  await createAcls('secure', [grant(open, 'read'), grant(unread, 'read'), grant(unread, 'describe'), ...[open, denied].flatMap(topic => [grant(topic, 'describe'), grant(topic, 'describe-configs')])], t)
  await produce('secure', [...records(open, 0, 20), ...records(denied, 0, 20)])
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  const config = writeTempFile(mm2Properties({
    source: alice,
    target: 'target',
    extra: [`A->B.topics = ${open}|${denied}|${unread}`, 'offset-syncs.topic.location = target', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false',
      'sync.topic.acls.enabled = false', 'sync.topic.configs.enabled = false', 'emit.heartbeats.interval.seconds = 1']
  }), '.properties', t)
  // and kmirror running with its HTTP endpoint, without --http-host: it listens on 127.0.0.1 only
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--progress-interval', '0'], { t })
  const [, host, port] = await kmirror.waitForOutput(/"host":"([^"]*)","port":(\d+)[^\n]*HTTP endpoint/, 60_000)
  assert.equal(host, '127.0.0.1')
  await waitFor(async () => ({ done: (await endOffsets('target', `A.${open}`).catch(() => [0n]))[0] === 20n, state: kmirror.stderr.slice(-2000) }),
    { timeoutMs: 30_000, message: 'the readable topic copied' })

  // When the console is opened in a browser
  const browser = await launchBrowser(t)
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const pageErrors: string[] = []
  page.on('pageerror', err => pageErrors.push(err.message))
  await page.goto(`http://127.0.0.1:${port}/`)

  // Then it shows the flow, both topics and the denied partition in red, with the grant to add
  const flow = '[data-flow="A->B"]'
  await waitForText(page, `${flow} [data-state]`, 'degraded', 'the flow and its state')
  await waitForText(page, `${flow} tr[data-topic="${open}"] td:nth-child(2)`, `A.${open}`, 'the readable topic and its remote topic')
  await waitForText(page, `${flow} tr[data-topic="${open}"] td:nth-child(5)`, '0', 'the readable topic caught up')
  const failing = `${flow} table.failing-partitions tr[data-partition="${denied}-0"]`
  await waitForText(page, `${failing} td:last-child`, new RegExp(`^TOPIC_AUTHORIZATION_FAILED on cluster A \\(source\\).*grant READ on topic ${denied} to User:alice on cluster A \\(kafka-acls\\.sh --bootstrap-server .* --operation Read --topic ${denied}; see "Least-privilege ACLs" in docs/operations\\.md\\)$`), 'the denied partition and its error')
  assert.equal(await styleOf(page, `${failing} td:first-child`, 'color'), 'rgb(198, 40, 40)', 'the failing partition is red')
  assert.equal(await styleOf(page, `${flow} tr[data-topic="${denied}"]`, 'backgroundColor'), 'rgb(253, 236, 234)', 'its topic row is red too')
  assert.equal(await page.locator(`${flow} tr[data-topic="${denied}"] td:nth-child(5)`).textContent(), '—', 'its lag is unknown, not 0')
  assert.equal(await page.locator('#health').textContent(), 'degraded')
  // and the topic whose remote topic is not created, in red with the grant
  const problem = `${flow} table.remote-topic-problems tr[data-remote-topic-problem="${unread}"]`
  await waitForText(page, `${problem} td:last-child`, new RegExp(`^source topic ${unread} on A is not replicated yet: .*grant DESCRIBE_CONFIGS on topic ${unread}`), 'the topic whose remote topic is not created')
  assert.equal(await page.locator(`${problem} td:nth-child(2)`).textContent(), `A.${unread}`)
  assert.equal(await styleOf(page, `${problem} td:first-child`, 'color'), 'rgb(198, 40, 40)', 'the remote topic problem is red')
  // (no broker troubled kmirror: the table of brokers in trouble is not shown)
  assert.equal(await page.locator('#brokers-section').isHidden(), true)

  // When 5 records arrive in a transaction left open (read_committed: kmirror cannot copy past it), then 3 more
  const transaction = await openTransaction('secure', records(open, 20, 5), t, { timeoutMs: 60_000 })
  // Then the lag shown grows with them
  await waitForText(page, `${flow} tr[data-topic="${open}"] td:nth-child(5)`, '5', 'a lag of the 5 uncommitted records')
  await produce('secure', records(open, 25, 3))
  await waitForText(page, `${flow} tr[data-topic="${open}"] td:nth-child(5)`, '8', 'a lag of 8 once 3 more records arrived')
  // and the topic opens onto its partition: position 20 (the open transaction's first record), high watermark 28
  await page.locator(`${flow} tr[data-topic="${open}"]`).click()
  const row = `${flow} table.partitions tr[data-partition="${open}-0"]`
  await waitForText(page, `${row} td:nth-child(2)`, '20', 'the position')
  await waitForText(page, `${row} td:nth-child(3)`, '28', 'the high watermark')
  // and says what holds it there (not red: short holds are normal, reported failing only past the hang threshold)
  await waitForText(page, `${row} td:nth-child(7)`, /^held at offset 20 by a transaction open on the source since \d{4}-\d\d-\d\dT/, 'the hold')
  assert.equal(await page.locator(row).getAttribute('class'), null, 'not failing')
  // and the topology shows both clusters and the flow's link
  await page.locator('#topology [data-cluster="A"]').waitFor({ timeout: 20_000 })
  assert.equal(await page.locator('#topology [data-cluster="B"]').count(), 1)
  assert.equal(await page.locator('#topology path[data-link="A->B"].flow').count(), 1)
  await keepScreenshot(page)

  // When the transaction commits, Then the lag goes back to 0 and the partition reaches the high watermark
  await transaction.commit()
  await waitForText(page, `${flow} tr[data-topic="${open}"] td:nth-child(5)`, '0', 'no lag once the transaction committed')
  await waitForText(page, `${row} td:nth-child(2)`, '29', 'the position past the commit marker')
  assert.equal((await endOffsets('target', `A.${open}`))[0], 28n)

  // When the operator selects the remote topic's name in its row, Then two refreshes later the selection is still
  // there and the cell is the same DOM node (the page updates in place, it does not rebuild the flow)
  const cell = JSON.stringify(`${flow} tr[data-topic="${open}"] td:nth-child(2)`)
  await page.evaluate(`(() => { const el = document.querySelector(${cell}); window.keptCell = el; const range = document.createRange(); range.selectNodeContents(el); getSelection().removeAllRanges(); getSelection().addRange(range) })()`)
  for (let refresh = 1; refresh <= 2; refresh++) {
    const before = await page.locator('#updated').getAttribute('data-at')
    await waitFor(async () => ({ done: await page.locator('#updated').getAttribute('data-at') !== before, state: before }), { timeoutMs: 10_000, intervalMs: 100, message: `refresh ${refresh} of the page` })
  }
  const kept = await page.evaluate(`(() => ({ same: document.querySelector(${cell}) === window.keptCell, selected: getSelection().toString() }))()`)
  assert.deepEqual(kept, { same: true, selected: `A.${open}` })
  assert.deepEqual(pageErrors, [])
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

/** A computed style, read in one turn of the page (it redraws every 1.5 s: a located element may be gone). */
async function styleOf (page: Page, selector: string, property: 'color' | 'backgroundColor'): Promise<string | null> {
  return await page.evaluate(([s, p]) => {
    const element = document.querySelector(s!)
    return element === null ? null : getComputedStyle(element)[p as 'color' | 'backgroundColor']
  }, [selector, property])
}

/** One screenshot per run, kept as a test artifact: .state/artifacts/console-<time>.png. */
async function keepScreenshot (page: Page): Promise<void> {
  const dir = join(process.env.KMIRROR_STATE ?? join(REPO_ROOT, '.state'), 'artifacts')
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `console-${new Date().toISOString().replace(/[:.]/g, '-')}.png`), fullPage: true })
}
