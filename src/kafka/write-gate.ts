/**
 * Whether the data path's writer (batch-writer.ts) may send a request now: the group lease (the `fence` hook of its
 * owner) and the group membership a write began under.
 *
 * Invariants:
 * - `check` throws FENCED (retriable: the flow goes on with what its group gives it next) when the lease does not
 *   hold, or when the membership the caller's write began under (`membership`, taken at its start) was lost since
 *   (`endMembership`): that write's partitions went with it, whatever the lease of a newer membership says.
 * - Without a group (no `fence` hook) the lease always holds; memberships still end only through `endMembership`.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'

export class WriteGate {
  readonly #fence: (() => string | null) | undefined
  readonly #cluster: ClusterContext
  #membership = 0

  constructor (fence: (() => string | null) | undefined, cluster: ClusterContext) {
    this.#fence = fence
    this.#cluster = cluster
  }

  /** The membership writes go out under now: a write takes it at its start and hands it to `check`. */
  get membership (): number {
    return this.#membership
  }

  endMembership (): void {
    this.#membership++
  }

  /** Why no request may go out now (the lease does not hold), or null. */
  reason (): string | null {
    return this.#fence?.() ?? null
  }

  check (membership = this.#membership): void {
    if (membership !== this.#membership) {
      throw new KmirrorError(ErrorCodes.FENCED, `not writing to ${this.#cluster.label}: the group membership this write began under was lost; its partitions may be owned by another instance now`, { retriable: true, details: { fence: 'membership lost' } })
    }
    const reason = this.reason()
    if (reason !== null) {
      throw new KmirrorError(ErrorCodes.FENCED, `not writing to ${this.#cluster.label}: ${reason}; this instance writes nothing until its lease holds again or it is assigned work anew`, { retriable: true, details: { fence: reason } })
    }
  }
}
