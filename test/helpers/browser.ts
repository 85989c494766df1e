/**
 * A real headless Chromium (Debian's `chromium`, driven by playwright-core) for the tests that look at the web
 * console as an operator would.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { waitFor } from './wait.ts'

const CHROMIUM = process.env.KMIRROR_TEST_CHROMIUM ?? '/usr/bin/chromium'

/** Starts Chromium, closed when the test ends. */
export async function launchBrowser (t: { after: (fn: () => unknown) => void }): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install chromium (or set KMIRROR_TEST_CHROMIUM)`)
  // As root (CI), Chromium refuses to start with its sandbox.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
  t.after(async () => { await browser.close() })
  return browser
}

/** The text of a cell, waiting until it reads `expected` (the page refreshes itself every 1.5 s). */
export async function waitForText (page: Page, selector: string, expected: string | RegExp, message: string): Promise<void> {
  await waitFor(async () => {
    const text = await page.locator(selector).first().textContent({ timeout: 1000 }).catch(() => null)
    return { done: text !== null && (typeof expected === 'string' ? text === expected : expected.test(text)), state: text }
  }, { timeoutMs: 20_000, intervalMs: 200, message })
}
