/** Small collection helpers every layer may use (no imports). */

/** The items grouped by key, each group in input order; keys in order of first appearance. */
export function groupBy<T, K> (items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>()
  for (const item of items) {
    const key = keyOf(item)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [item])
    else group.push(item)
  }
  return groups
}
