/**
 * Loaded with `node --import` before kmirror's CLI: it makes kmirror meet an error nobody catches, as a bug
 * would, and that quotes a secret. KMIRROR_TEST_CRASH_MESSAGE is the error's message; KMIRROR_TEST_CRASH_AS is
 * `throw` (an exception thrown from a timer) or `reject` (a rejected promise nobody awaits);
 * KMIRROR_TEST_CRASH_ON is `handlers` (as soon as kmirror has installed its process handlers, or after 2 s
 * without them) or `SIGUSR2` (when the test sends that signal).
 */
const message = process.env.KMIRROR_TEST_CRASH_MESSAGE ?? 'crash'

function crash (): void {
  const error = new Error(message, { cause: new Error(`inner ${message}`) })
  if (process.env.KMIRROR_TEST_CRASH_AS === 'reject') void Promise.reject(error)
  else throw error
}

if (process.env.KMIRROR_TEST_CRASH_ON === 'SIGUSR2') {
  process.on('SIGUSR2', crash)
} else {
  const started = Date.now()
  const timer = setInterval(() => {
    if (process.listenerCount('uncaughtException') === 0 && Date.now() - started < 2000) return
    clearInterval(timer)
    crash()
  }, 5)
}
