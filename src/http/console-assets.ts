/**
 * The web console's page and files, served as they are from `src/http/console/` (plain HTML, CSS and ES modules:
 * no build step, no CDN, so the console works on a host with no Internet access), read through `readAsset` (the
 * single executable embeds them). Only the files listed here are served; each is read once and kept in memory.
 */
import type { ServerResponse } from 'node:http'
import { readAsset } from '../assets.ts'

const CONTENT_TYPES = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml'
} as const

/** URL path → file in console/. */
export const CONSOLE_FILES: ReadonlyMap<string, string> = new Map([
  ['/', 'index.html'],
  ['/console/console.css', 'console.css'],
  ['/console/console.js', 'console.js'],
  ['/console/render.js', 'render.js'],
  ['/console/morph.js', 'morph.js'],
  ['/console/format.js', 'format.js'],
  ['/console/topology.js', 'topology.js'],
  ['/console/favicon.svg', 'favicon.svg']
])

const cache = new Map<string, Buffer>()

function read (file: string): Buffer {
  let body = cache.get(file)
  if (body === undefined) {
    body = readAsset(`http/console/${file}`)
    cache.set(file, body)
  }
  return body
}

function contentType (file: string): string {
  const extension = file.slice(file.lastIndexOf('.') + 1)
  return extension in CONTENT_TYPES ? CONTENT_TYPES[extension as keyof typeof CONTENT_TYPES] : 'application/octet-stream'
}

/** Answers a console path (`/`, `/console/...`); false for any other. */
export function serveConsoleAsset (path: string, res: ServerResponse): boolean {
  const file = CONSOLE_FILES.get(path === '/index.html' ? '/' : path)
  if (file === undefined) return false
  res.writeHead(200, {
    'content-type': contentType(file),
    'cache-control': 'no-cache',
    // Everything the page needs comes from kmirror itself: nothing else may load.
    'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff'
  }).end(read(file))
  return true
}
