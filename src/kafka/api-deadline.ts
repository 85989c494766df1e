/**
 * `default.api.timeout.ms` as the Java client reads it: the bound of one whole admin or consumer operation
 * (every request and retry it takes), on top of each request's `request.timeout.ms`. An operation past it fails
 * with KMIRROR_ERR_TIMEOUT naming the operation, the cluster and the brokers tried; the work it started is
 * abandoned (its own requests end at their request timeout).
 */
import { rejectAfter } from '../deadline.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { timeoutHint } from './errors.ts'

export async function withApiDeadline<T> (work: () => Promise<T>, ms: number, action: string, cluster: ClusterContext): Promise<T> {
  return await rejectAfter(work(), ms, () => new KmirrorError(ErrorCodes.TIMEOUT,
    `${action}: not done within default.api.timeout.ms = ${ms} ms; ${timeoutHint(cluster)}`, { retriable: true }))
}
