/**
 * The one key of a topic partition in maps and sets (`topic NUL partition`: topic names cannot hold NUL), and
 * its inverse. Every module that keys anything by partition uses these two functions.
 */

export interface TopicPartition {
  readonly topic: string
  readonly partition: number
}

export function partitionKey (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

export function parsePartitionKey (key: string): TopicPartition {
  const at = key.lastIndexOf('\u0000')
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) }
}
