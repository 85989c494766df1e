/**
 * What a flow's topic refresh compares its result with, to tell its group that the work changed (the source
 * partitions to copy are other than those the group's leader listed), so the group rebalances and the new
 * partitions are assigned.
 *
 * Invariants:
 * - After a refresh, that refresh is the baseline of the next one (an exact comparison of topics and counts).
 * - The work the leader lists for a rebalance is what the group assigns: listing makes it the baseline. That list is
 *   what the refresh replicates (`RemoteTopics.replicable`: on the refreshing leader, its last result), so a refresh
 *   that finds nothing new equals it; a list that differed (a topic whose remote topic cannot be created) would make
 *   every refresh a change, and the group rebalance for good.
 * - A member that is given the refresh job compares its first refresh with the partitions of the current
 *   generation (what every member's share adds up to), not with a refresh of its own from an older generation:
 *   a topic that appeared between the leader's list and that refresh, on whichever member it runs, changes the
 *   work at once instead of waiting for the next change.
 */

export interface TopicPartitions {
  readonly source: string
  readonly partitions: number
}

export class RefreshBaseline {
  #exact: string | null = null

  /** The leader listed these topics as the group's work. */
  listed (topics: readonly TopicPartitions[]): void {
    this.#exact = partitionsOf(topics)
  }

  /** This member was given the refresh job: its next refresh compares with the generation's partitions. */
  jobAssigned (): void {
    this.#exact = null
  }

  /**
   * A refresh found TOPICS; GENERATION_PARTITIONS is how many partitions the current generation assigned (null when
   * unknown: no group, or no assignment yet). True when the group must list its work again.
   */
  refreshed (topics: readonly TopicPartitions[], generationPartitions: number | null): boolean {
    const now = partitionsOf(topics)
    const changed = this.#exact !== null
      ? this.#exact !== now
      : generationPartitions !== null && generationPartitions !== topics.reduce((n, t) => n + t.partitions, 0)
    this.#exact = now
    return changed
  }
}

/** A comparable form of the source partitions of some topics. */
function partitionsOf (topics: readonly TopicPartitions[]): string {
  return topics.map(t => `${t.source}:${t.partitions}`).sort().join('\n')
}
