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
 * generation"). An operator's own `--node-options` (the executable) or NODE_OPTIONS (the others) come after, and
 * win.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16']
