/**
 * The units of work a flow's group assigns to its members: one source partition, or one periodic job.
 * A group is per flow, so an item carries no flow name. `workKey` is the item's wire form in the group
 * protocol (member metadata and assignments): stable across versions and unique per item.
 */
export type WorkItem =
  | { readonly kind: 'partition', readonly topic: string, readonly partition: number }
  | { readonly kind: 'job', readonly job: string }

/** `p:<partition>:<topic>` or `j:<job>`; the topic comes last because a topic name may hold ':'. */
export function workKey (item: WorkItem): string {
  return item.kind === 'partition' ? `p:${item.partition}:${item.topic}` : `j:${item.job}`
}

/** The inverse of `workKey`; throws on a key no kmirror wrote (a member of another version or program). */
export function parseWorkKey (key: string): WorkItem {
  if (key.startsWith('j:') && key.length > 2) return { kind: 'job', job: key.slice(2) }
  const match = /^p:(\d+):(.+)$/s.exec(key)
  if (match === null) throw new Error(`not a kmirror work key: ${JSON.stringify(key)}`)
  return { kind: 'partition', topic: match[2]!, partition: Number(match[1]) }
}
