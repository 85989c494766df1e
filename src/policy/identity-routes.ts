/**
 * Which records each flow relays in a mesh of clusters replicating with IdentityReplicationPolicy, so that a
 * record produced once on a cluster reaches every other cluster exactly once. A path alone (provenance.ts) stops
 * a record from going back where it has been, but not from arriving twice: in a full mesh A, B, C a record of A
 * reaches C from A directly and again through B. So each origin's records travel along one tree: a breadth-first
 * tree over the enabled identity flows from the origin (shortest routes, ties to the first alias in sorted
 * order), and flow S->T relays the records of origin O only when S is T's parent in O's tree.
 *
 *   ring A->B->C->A: A's records go A->B->C; full mesh A, B, C: A's records go A->B and A->C, never B->C.
 *
 * Every process computes the same trees from the same configuration (a flow's enabled setting, not `--clusters`,
 * decides), so flows run by different processes agree.
 */

export interface MeshFlow {
  readonly source: string
  readonly target: string
}

/** For each flow `S->T`, the origins whose records it relays, sorted. */
export function identityRelays (clusters: readonly string[], flows: readonly MeshFlow[]): Map<string, string[]> {
  const out = new Map<string, string[]>(flows.map(f => [`${f.source}->${f.target}`, []]))
  const targets = new Map<string, string[]>()
  for (const f of flows) targets.set(f.source, [...(targets.get(f.source) ?? []), f.target].sort())
  for (const origin of clusters) {
    for (const [node, parent] of breadthFirstParents(origin, targets)) out.get(`${parent}->${node}`)?.push(origin)
  }
  for (const origins of out.values()) origins.sort()
  return out
}

/** Each cluster reachable from `origin` (but the origin), with its parent in the breadth-first tree. */
function breadthFirstParents (origin: string, targets: ReadonlyMap<string, readonly string[]>): Map<string, string> {
  const parents = new Map<string, string>()
  const queue = [origin]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!
    for (const next of targets.get(node) ?? []) {
      if (next === origin || parents.has(next)) continue
      parents.set(next, node)
      queue.push(next)
    }
  }
  return parents
}
