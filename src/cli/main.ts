#!/usr/bin/env -S node --max-semi-space-size=16
/**
 * The `kmirror` executable. Turns on Node's compile cache before any other module loads, then runs the
 * command line (program.ts). The shebang gives Node the flags of node-flags.ts (`env -S` splits them).
 *
 * The compile cache (`module.enableCompileCache`, in `os.tmpdir()/node-compile-cache` or $NODE_COMPILE_CACHE;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps the compiled code of kmirror's modules, type-stripped
 * sources included, and of its dependencies, keyed by their content: every start after the first loads them
 * about 130 ms sooner. It only covers modules loaded after the call, so this file imports nothing else
 * statically.
 */
import module from 'node:module'

module.enableCompileCache?.()
const { main } = await import('./program.ts')
await main()
