/**
 * The topology a running kmirror serves on `/topology`: what `kmirror topology` reads (every cluster's heartbeat
 * topic names), as a graph with this instance's flows on it (heartbeat/topology-graph.ts). Reading lists the
 * topics of every cluster, so a result is kept for `ttlMs` and concurrent readers share one read.
 */
import type { FlowConfig, KmirrorConfig } from '../config/types.ts'
import { topologyGraph, type TopologyGraph } from '../heartbeat/topology-graph.ts'
import { readTopology, type ClusterTopology } from '../heartbeat/topology-reader.ts'

export interface TopologyDocument extends TopologyGraph {
  /** When the clusters were read (ISO-8601). */
  readonly readAt: string
}

/** How long a topology read is served again before the clusters are listed anew. */
export const TOPOLOGY_TTL_MS = 15_000

export class TopologyView {
  readonly #config: KmirrorConfig
  readonly #flows: readonly { name: string, source: string, target: string }[]
  readonly #read: (config: KmirrorConfig) => Promise<ClusterTopology[]>
  readonly #ttlMs: number
  readonly #now: () => number
  #last: { at: number, document: TopologyDocument } | null = null
  #reading: Promise<TopologyDocument> | null = null

  /** `flows`: the flows this instance runs (drawn on the links they copy along). */
  constructor (config: KmirrorConfig, flows: readonly FlowConfig[], options: { read?: (config: KmirrorConfig) => Promise<ClusterTopology[]>, ttlMs?: number, now?: () => number } = {}) {
    this.#config = config
    this.#flows = flows.map(f => ({ name: f.name, source: f.source.alias, target: f.target.alias }))
    this.#read = options.read ?? (async c => await readTopology(c))
    this.#ttlMs = options.ttlMs ?? TOPOLOGY_TTL_MS
    this.#now = options.now ?? Date.now
  }

  async document (): Promise<TopologyDocument> {
    if (this.#last !== null && this.#now() - this.#last.at < this.#ttlMs) return this.#last.document
    this.#reading ??= this.#readNow().finally(() => { this.#reading = null })
    return await this.#reading
  }

  async #readNow (): Promise<TopologyDocument> {
    const at = this.#now()
    const clusters = await this.#read(this.#config)
    const document = { readAt: new Date(at).toISOString(), ...topologyGraph(clusters, this.#flows) }
    this.#last = { at, document }
    return document
  }
}
