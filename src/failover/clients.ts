/**
 * The clients a failover, failback or offsets-set command needs, with a deadline for a cluster that may be
 * gone: a broker killed with its host does not refuse connections, it just never answers.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { AdminClient } from '../kafka/admin-client.ts'
import { RecordFetcher } from '../kafka/record-fetcher.ts'

export interface ClusterClients {
  readonly alias: string
  readonly admin: AdminClient
  readonly reader: RecordFetcher
  close: () => Promise<void>
}

export function openClusterClients (cluster: ClusterClientConfig, role: string): ClusterClients {
  const id = (what: string): string => `kmirror|${role}|${cluster.alias}-${what}`
  const admin = new AdminClient(cluster.admin, id('admin'), `cluster ${cluster.alias}`)
  const reader = new RecordFetcher(cluster.consumer, id('reader'), { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 52_428_800, maxPartitionBytes: 1_048_576 })
  return {
    alias: cluster.alias,
    admin,
    reader,
    // Closing a client of a dead cluster can wait for its connections: never longer than a few seconds.
    close: async () => { await withDeadline(Promise.all([admin.close(), reader.close()]), 3000, `closing clients of cluster ${cluster.alias}`).catch(() => undefined) }
  }
}

/** `work`, or a CLUSTER_UNREACHABLE error after `ms`. */
export async function withDeadline<T> (work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `${what}: no answer within ${ms} ms`, { retriable: true })), ms)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

export function errorText (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
