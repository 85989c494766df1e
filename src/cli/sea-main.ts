/**
 * Entry of the single executable `kmirror-linux-x64` (scripts/package.ts bundles from here). A single executable
 * runs one CommonJS script, which cannot await at top level, and it needs no compile cache (its code cache is
 * in the executable); otherwise the same as main.ts.
 */
import { main, reportFatal } from './program.ts'

main().catch((err: unknown) => { process.exitCode = reportFatal(err) })
