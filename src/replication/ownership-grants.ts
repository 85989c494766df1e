/**
 * When this instance's ownership of partitions last changed, for the data path's queued adds: an add is asked for
 * (its partitions' starts read) while owning them, and applied between two rounds, possibly a long round later.
 *
 * Invariant: an add stamped before a loss of the membership, or before a release of one of its partitions, never
 * adds that partition, even if it is owned again by the time the add is applied: the grant it was asked under
 * ended, and its start (read from the progress stored then) may be older than what another owner stored since.
 * The add of the new grant, stamped after, carries the fresh start.
 */
export class OwnershipGrants {
  #sequence = 0
  #lostAt = 0
  readonly #releasedAt = new Map<string, number>()

  /** Aborted at the next loss of the membership: a release under way then stops storing (progress-flusher.ts). */
  #loss = new AbortController()

  /** The stamp of an add asked for now. */
  stamp (): number {
    return this.#sequence
  }

  lost (): void {
    this.#lostAt = ++this.#sequence
    this.#loss.abort()
    this.#loss = new AbortController()
  }

  /** Aborted when the membership held now is lost. */
  get untilLost (): AbortSignal {
    return this.#loss.signal
  }

  released (keys: Iterable<string>): void {
    const at = ++this.#sequence
    for (const key of keys) this.#releasedAt.set(key, at)
  }

  /** Whether an add stamped `stamp` may still add the partition `key`: no loss, and no release of it, since. */
  holds (key: string, stamp: number): boolean {
    return this.#lostAt <= stamp && (this.#releasedAt.get(key) ?? 0) <= stamp
  }
}
