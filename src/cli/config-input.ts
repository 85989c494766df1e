/**
 * Reading a command's configuration input: every command reports a bad file the same way (the problems on
 * stderr, exit code 2, nothing written anywhere).
 */
import { loadConfig } from '../config/load.ts'
import type { KmirrorConfig } from '../config/types.ts'
import { ConfigError, ExitCodes } from '../errors.ts'
import { prepareClientSecurity } from '../kafka/client-security.ts'

export type Loaded<T> = { readonly ok: true, readonly value: T } | { readonly ok: false, readonly exitCode: number }

/** Runs `load`; a ConfigError is printed and becomes exit code 2, anything else propagates. */
export function loadInput<T> (load: () => T): Loaded<T> {
  try {
    return { ok: true, value: load() }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`kmirror: ${err.message}\n`)
    return { ok: false, exitCode: ExitCodes.BAD_INPUT }
  }
}

/**
 * loadConfig, then the security settings of every cluster a flow can reach (key and trust stores opened, SASL
 * and OAuth settings checked), so a wrong password or an unreadable store is a ConfigError before any connection.
 */
export function loadCheckedConfig (file: string): KmirrorConfig {
  const config = loadConfig(file)
  const clusters = config.flows.flatMap(flow => [flow.source, flow.target]).filter(cluster => cluster.bootstrapServers.length > 0)
  const problems = prepareClientSecurity(clusters)
  if (problems.length > 0) throw new ConfigError(problems, config.sourceFile)
  return config
}
