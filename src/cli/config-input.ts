/**
 * Reading a command's configuration input: every command reports a bad file the same way (the problems on
 * stderr, exit code 2, nothing written anywhere), and checks the security settings (key and trust stores opened,
 * SASL and OAuth settings read) of exactly the clusters it is going to reach, before any connection.
 */
import { selectFlows } from '../config/flows.ts'
import { loadConfig } from '../config/load.ts'
import type { ClusterClientConfig, FlowConfig, KmirrorConfig } from '../config/types.ts'
import { ConfigError, ExitCodes } from '../errors.ts'
import { prepareClientSecurity } from '../kafka/client-security.ts'
import { processRedactor } from '../redactor.ts'

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

export interface Checked<T> {
  readonly config: KmirrorConfig
  readonly picked: T
}

/**
 * loadConfig, whose secrets the process's redactor hides from then on in everything kmirror prints, then `pick`
 * what the command works on, then the security settings of the clusters `reached` says it connects to: a wrong
 * password or an unreadable store of such a cluster is a ConfigError. Clusters the command does not reach are
 * not checked (a disabled flow's cluster, one left out by `--clusters`).
 */
export function loadCheckedConfig<T> (file: string, pick: (config: KmirrorConfig) => T, reached: (picked: T) => readonly ClusterClientConfig[]): Checked<T> {
  const config = loadConfig(file)
  processRedactor.add(config.secrets)
  const picked = pick(config)
  const problems = prepareClientSecurity(reached(picked).filter(cluster => cluster.bootstrapServers.length > 0))
  if (problems.length > 0) throw new ConfigError(problems, config.sourceFile)
  return { config, picked }
}

/**
 * The enabled flows (restricted by `--clusters` to those whose target is listed), with the clusters they reach
 * checked. `run` adds heartbeat pairs of disabled flows; a heartbeat pair whose cluster cannot get a client is
 * logged and left out at run time, as heartbeats never stop kmirror.
 */
export function loadSelectedFlows (file: string, clusters: readonly string[] | undefined): { config: KmirrorConfig, flows: FlowConfig[] } {
  const { config, picked } = loadCheckedConfig(file, c => selectFlows(c, clusters), clustersOf)
  return { config, flows: picked }
}

/** The source and target clusters of `flows`. */
export function clustersOf (flows: readonly FlowConfig[]): ClusterClientConfig[] {
  return flows.flatMap(flow => [flow.source, flow.target])
}
