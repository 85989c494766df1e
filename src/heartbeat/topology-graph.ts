/**
 * The replication topology as a graph to draw (the console's `/topology`): one node per cluster, one link per
 * direct replication seen in the heartbeats (an upstream cluster at 1 hop: MirrorClient.replicationHops) or run by
 * this instance's flows, and a place for each node: its column is how many links lie between it and a cluster
 * nothing replicates into, its row its rank within the column.
 *
 * Worked example, chain A->B->C plus A->D: A has no upstream (column 0), B and D are 1 hop from A (column 1, rows
 * 0 and 1 by alias), C is 1 hop from B (column 2). In a cycle (A<->B) no cluster is a root: the first alias by
 * name is taken as one, so A is column 0 and B column 1.
 */
import type { ClusterTopology } from './topology-reader.ts'

export interface TopologyNode {
  readonly alias: string
  readonly reachable: boolean
  /** Why the cluster could not be read. */
  readonly error?: string
  /** Every upstream cluster with its hop count (from the heartbeat topics' names). */
  readonly upstream: readonly { readonly alias: string, readonly hops: number }[]
  readonly column: number
  readonly row: number
}

export interface TopologyLink {
  readonly from: string
  readonly to: string
  /** The target holds a heartbeat topic naming `from` at 1 hop: records flowed (from some replicator). */
  readonly heartbeats: boolean
  /** The flow of this instance that copies along the link, or null. */
  readonly flow: string | null
}

export interface TopologyGraph {
  readonly nodes: readonly TopologyNode[]
  readonly links: readonly TopologyLink[]
}

/** A flow of this instance: its name and clusters. */
export interface FlowLink {
  readonly name: string
  readonly source: string
  readonly target: string
}

export function topologyGraph (clusters: readonly ClusterTopology[], flows: readonly FlowLink[]): TopologyGraph {
  const links = new Map<string, { from: string, to: string, heartbeats: boolean, flow: string | null }>()
  const linkOf = (from: string, to: string): { from: string, to: string, heartbeats: boolean, flow: string | null } => {
    const key = `${from}\u0000${to}`
    const link = links.get(key) ?? { from, to, heartbeats: false, flow: null }
    links.set(key, link)
    return link
  }
  for (const c of clusters) {
    if (!c.reachable) continue
    for (const u of c.upstream) if (u.hops === 1) linkOf(u.alias, c.alias).heartbeats = true
  }
  for (const f of flows) linkOf(f.source, f.target).flow = f.name
  const aliases = [...new Set([...clusters.map(c => c.alias), ...[...links.values()].flatMap(l => [l.from, l.to])])].sort()
  const columns = layoutColumns(aliases, [...links.values()])
  const rows = new Map<number, number>()
  const nodes = aliases.map((alias): TopologyNode => {
    const column = columns.get(alias) ?? 0
    const row = rows.get(column) ?? 0
    rows.set(column, row + 1)
    const c = clusters.find(x => x.alias === alias)
    if (c === undefined) return { alias, reachable: true, upstream: [], column, row }
    if (!c.reachable) return { alias, reachable: false, error: c.error, upstream: [], column, row }
    return { alias, reachable: true, upstream: c.upstream.map(u => ({ alias: u.alias, hops: u.hops })), column, row }
  })
  const sortedLinks = [...links.values()].sort((a, b) => compare(a.from, b.from) || compare(a.to, b.to))
  return { nodes, links: sortedLinks }
}

/** Breadth-first columns from the roots (no incoming link); in a cycle, from the first alias left. */
function layoutColumns (aliases: readonly string[], links: readonly { from: string, to: string }[]): Map<string, number> {
  const columns = new Map<string, number>()
  const hasIncoming = new Set(links.filter(l => l.from !== l.to).map(l => l.to))
  let frontier = aliases.filter(a => !hasIncoming.has(a))
  let column = 0
  while (columns.size < aliases.length) {
    if (frontier.length === 0) {
      frontier = [aliases.find(a => !columns.has(a))!]
      column = 0
    }
    for (const a of frontier) columns.set(a, column)
    const next = new Set<string>()
    for (const l of links) if (frontier.includes(l.from) && !columns.has(l.to)) next.add(l.to)
    frontier = [...next].sort()
    column++
  }
  return columns
}

function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
