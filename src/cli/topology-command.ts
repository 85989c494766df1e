/**
 * `kmirror topology <file> [--json]`: for each cluster of the configuration, its upstream clusters and how many
 * replication hops away each is, computed from the heartbeat topic names present on the cluster exactly as
 * MM2's MirrorClient (RemoteClusterUtils.upstreamClusters / replicationHops) does. Read-only.
 *
 * Exit codes: 0 every cluster was read; 3 at least one cluster could not be read (it is listed as unreachable,
 * with the reason on stderr, and the others are still shown); 2 bad configuration.
 */
import { clustersOf, loadCheckedConfig } from './config-input.ts'
import { ConfigError, ExitCodes } from '../errors.ts'
import { readTopology, type ClusterTopology, type TopicLister } from '../heartbeat/topology-reader.ts'
import { writeJson } from '../redactor.ts'

export interface TopologyOptions {
  readonly json: boolean
  /** Replaces the admin client, for tests. */
  readonly listTopics?: TopicLister
}

export async function topologyCommand (file: string, options: TopologyOptions): Promise<number> {
  let config
  try {
    // topology reads every cluster, through the flows readTopology picks: check them all.
    config = loadCheckedConfig(file, c => c, c => clustersOf(c.flows)).config
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`kmirror: ${err.message}\n`)
      return ExitCodes.BAD_INPUT
    }
    throw err
  }
  const clusters = await readTopology(config, options.listTopics)
  if (options.json) writeJson(process.stdout, { clusters })
  else process.stdout.write(formatTopologyTable(clusters))
  for (const c of clusters) if (!c.reachable) process.stderr.write(`kmirror: cluster ${c.alias} is unreachable: ${c.error}\n`)
  return clusters.every(c => c.reachable) ? ExitCodes.OK : ExitCodes.START_FAILED
}

/**
 * One row per cluster and upstream cluster, nearest first:
 *
 *   CLUSTER  UPSTREAM  HOPS  VIA
 *   A        -
 *   C        B         1     B.heartbeats
 *   C        A         2     B.A.heartbeats
 *   D        (unreachable)
 */
export function formatTopologyTable (clusters: readonly ClusterTopology[]): string {
  const rows: string[][] = [['CLUSTER', 'UPSTREAM', 'HOPS', 'VIA']]
  for (const c of clusters) {
    if (!c.reachable) rows.push([c.alias, '(unreachable)', '', ''])
    else if (c.upstream.length === 0) rows.push([c.alias, '-', '', ''])
    else for (const u of c.upstream) rows.push([c.alias, u.alias, String(u.hops), u.via])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map(r => r[i]!.length)))
  return rows.map(r => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n'
}
