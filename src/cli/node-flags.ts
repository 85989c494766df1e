/**
 * The Node (V8) flags every kmirror launcher starts Node with: the single executable's sea-config (`execArgv`),
 * the `kmirror` command's shebang (main.ts), `npm run kmirror`, and the tests and benchmarks that spawn kmirror.
 * They must be given at start: V8 sizes its heap before any of kmirror's code runs. A unit test
 * (node-flags.test.ts) checks that every launcher names the same ones.
 *
 * `--max-semi-space-size=16` (MiB): on a large host V8 lets its young generation grow to 128 MiB, and at thousands
 * of partitions each fetch round's garbage fills it, so the process carries that much garbage (and the buffers it
 * still holds) between collections. Capped at 16, the 5,000-partition benchmark's peak RSS fell from 382-388 MiB
 * to 314-333 MiB, with the same records/s and CPU seconds in the bulk benchmark (bench/RESULTS.md, "Young
 * generation"). The executable takes an operator's `--node-options` after these, so they win there; Node reads
 * NODE_OPTIONS before its command line, so elsewhere a different value goes on the command line (`node
 * --max-semi-space-size=8 dist/cli/main.js ...`). The shebang needs an `env` that knows `-S` (GNU coreutils 8.30+,
 * BSD, macOS; not BusyBox): elsewhere run `node <flags> dist/cli/main.js`.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16']
