/**
 * Deadlines for the clusters a failover, failback or offsets-set command talks to (their clients come from
 * kafka/cluster-clients.ts): a broker killed with its host does not refuse connections, it just never answers.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'

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
