/**
 * `npm run package`: builds dist/kmirror-linux-x64, one executable that runs kmirror on a host without Node
 * (Node's single-executable applications, SEA).
 *
 * 1. esbuild bundles src/cli/sea-main.ts and every dependency into one CommonJS script (a SEA runs one CommonJS
 *    script; its `require` loads Node's built-in modules only). esbuild because it bundles TypeScript with type
 *    stripping alone (no type check, like Node), converts ESM to CommonJS with the lazy loading of dynamic imports
 *    kept, and does it in about a second with a single native binary and no plugins to install.
 * 2. Node writes the SEA blob (`--experimental-sea-config`, Node 24) with the script's code cache and every
 *    non-.ts file under src/ as an asset (src/assets.ts reads them).
 *    `execArgvExtension: 'cli'` makes it ignore NODE_OPTIONS (Node 24's sea-config; `env`, the default, would
 *    let a host's NODE_OPTIONS inject `--require` and the like into the executable); Node options are taken only
 *    from the command line, `--node-options="--max-old-space-size=256"` (Node removes it from the arguments).
 * 3. postject injects the blob into a copy of the Node that runs this script (node_modules' `node`: the blob and
 *    the binary must come from the same Node).
 *
 * Bundling details: @platformatic/wasm-utils reads its .wasm file by path; its `bundled` entry embeds it.
 * `requireLazily('x')` (createRequire, loading a heavy module on first use) becomes `require('x')`, which esbuild
 * bundles and still evaluates on first use. `import.meta.url` is the executable's URL: the client library's
 * optional native CRC-32C addon is then not found and it uses its WebAssembly one (kmirror has no native addon).
 *
 * `--if-stale`: skip the build when dist/kmirror-linux-x64 was built from the same inputs (tests use it).
 */
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { NODE_FLAGS } from '../src/cli/node-flags.ts'

const ROOT = join(import.meta.dirname, '..')
const SRC = join(ROOT, 'src')
const WORK = join(ROOT, 'dist', 'sea')
const BINARY = join(ROOT, 'dist', 'kmirror-linux-x64')
const STAMP = join(WORK, 'inputs.sha256')
/** The sentinel Node's SEA support looks for (documented with `postject` in Node's single-executable docs). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

function filesUnder (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(entry => entry.isFile())
    .map(entry => join(entry.parentPath, entry.name))
    .sort()
}

/** A digest of everything the executable is built from: sources, locked dependencies, this script, the Node. */
function inputsDigest (): string {
  const hash = createHash('sha256').update(process.version)
  for (const file of [...filesUnder(SRC), join(ROOT, 'package.json'), join(ROOT, 'package-lock.json'), import.meta.filename]) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

const lazyRequires: Plugin = {
  name: 'lazy-requires',
  setup (b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, args => {
      const text = readFileSync(args.path, 'utf8')
      return { contents: text.replace(/\brequireLazily\((['"][^'"]+['"])\)/g, 'require($1)'), loader: 'ts' }
    })
  }
}

async function bundle (script: string): Promise<void> {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const result = await build({
    entryPoints: [join(SRC, 'cli', 'sea-main.ts')],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0] ?? '24'}`,
    alias: { '@platformatic/wasm-utils': '@platformatic/wasm-utils/bundled' },
    define: { KMIRROR_BUNDLED_VERSION: JSON.stringify(version), 'import.meta.url': 'KMIRROR_IMPORT_META_URL' },
    banner: { js: 'const KMIRROR_IMPORT_META_URL = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [lazyRequires],
    legalComments: 'none',
    logLevel: 'warning'
  })
  if (result.errors.length > 0) throw new Error('esbuild failed')
}

export function seaConfig (script: string, blob: string): Record<string, unknown> & { readonly execArgv: readonly string[] } {
  const assets = Object.fromEntries(filesUnder(SRC).filter(file => !file.endsWith('.ts')).map(file => [relative(SRC, file), file]))
  // execArgvExtension 'cli': the executable ignores NODE_OPTIONS (a host's `--require`, `--import` or `--inspect`
  // would otherwise run inside kmirror); Node options come only from its own command line (`--node-options=...`).
  // execArgv: the Node flags every launcher gives (node-flags.ts); a `--node-options` on the command line comes after.
  return { main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, execArgv: [...NODE_FLAGS], execArgvExtension: 'cli', assets }
}

async function packageBinary (): Promise<void> {
  const started = Date.now()
  const digest = inputsDigest()
  if (process.argv.includes('--if-stale') && existsSync(BINARY) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) {
    process.stdout.write(`${relative(ROOT, BINARY)} is up to date\n`)
    return
  }
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(WORK, { recursive: true })
  const script = join(WORK, 'kmirror.cjs')
  const blob = join(WORK, 'kmirror.blob')
  const config = join(WORK, 'sea-config.json')
  await bundle(script)
  writeFileSync(config, JSON.stringify(seaConfig(script, blob), null, 2))
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'pipe' })
  rmSync(BINARY, { force: true })
  copyFileSync(process.execPath, BINARY)
  chmodSync(BINARY, 0o755)
  const postject = join(ROOT, 'node_modules', 'postject', 'dist', 'cli.js')
  // postject's ELF library warns about note sections it does not name ("Can't find string offset"): harmless, and
  // its output is only shown when the injection fails (execFileSync's error carries it).
  execFileSync(process.execPath, [postject, BINARY, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], { stdio: 'pipe' })
  writeFileSync(STAMP, digest)
  process.stdout.write(`built ${relative(ROOT, BINARY)} (Node ${process.version}) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
}

if (import.meta.main) await packageBinary()
