/**
 * Walking the error trees of the Kafka library: aggregated `errors`, then `cause`.
 */

/**
 * Visits every error of the library's error tree (aggregated `errors`, then `cause`), breadth first, each
 * once, until `visit` returns something other than undefined, which is then returned.
 */
export function searchErrorTree<T> (err: unknown, visit: (e: object) => T | undefined): T | undefined {
  const seen = new Set<unknown>()
  const queue: unknown[] = [err]
  while (queue.length > 0) {
    const e = queue.shift()
    if (e === null || typeof e !== 'object' || seen.has(e)) continue
    seen.add(e)
    const found = visit(e)
    if (found !== undefined) return found
    const nested = (e as { errors?: unknown }).errors
    if (Array.isArray(nested)) queue.push(...nested)
    queue.push((e as { cause?: unknown }).cause)
  }
  return undefined
}
