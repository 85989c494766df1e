/**
 * Which keys of the progress store commits wrote while a load read (progress-store.ts, its invariants): such a key
 * keeps the value the commit put in memory rather than the older value the load read.
 *
 * Invariants:
 * - Generations only grow: a load that began at generation G did not see the writes of marks above G.
 * - A key is marked pending when its write begins (the read may be under way already) and written when the write is
 *   acknowledged (a write begun before the load may land after its read). A write that fails takes back its own
 *   pending mark only: another commit's mark of the key, pending or written, stands.
 * - Marks are kept only while a load is under way (with none, a later load begins after every write anyway).
 */

interface KeyMarks {
  /** The generation of the last acknowledged write of the key, 0 for none. */
  written: number
  /** The generations of its writes under way. */
  readonly pending: Set<number>
}

export class CommitMarks {
  #generation = 0
  #loads = 0
  readonly #marks = new Map<string, KeyMarks>()

  /** A load begins: the generation it began at (marks above it are writes it may not have read). */
  loadStarted (): number {
    this.#loads++
    return this.#generation
  }

  loadEnded (): void {
    if (--this.#loads === 0) this.#marks.clear()
  }

  /** KEYS are about to be written: marked pending for the loads under way; the token that settles them (null: none). */
  writing (keys: readonly string[]): number | null {
    if (this.#loads === 0) return null
    const generation = ++this.#generation
    for (const key of keys) this.#of(key).pending.add(generation)
    return generation
  }

  /** The write of TOKEN failed: it changed nothing in memory, so its pending marks go. */
  failed (keys: readonly string[], token: number | null): void {
    if (token === null) return
    for (const key of keys) this.#marks.get(key)?.pending.delete(token)
  }

  /** The write of TOKEN was acknowledged: KEYS are marked written now, for the loads under way. */
  written (keys: readonly string[], token: number | null): void {
    if (this.#loads === 0) return
    const generation = ++this.#generation
    for (const key of keys) {
      const marks = this.#of(key)
      if (token !== null) marks.pending.delete(token)
      marks.written = generation
    }
  }

  /** Whether a commit marked KEY after generation SINCE (a write under way or acknowledged). */
  markedSince (key: string, since: number): boolean {
    const marks = this.#marks.get(key)
    if (marks === undefined) return false
    if (marks.written > since) return true
    for (const g of marks.pending) if (g > since) return true
    return false
  }

  #of (key: string): KeyMarks {
    let marks = this.#marks.get(key)
    if (marks === undefined) {
      marks = { written: 0, pending: new Set() }
      this.#marks.set(key, marks)
    }
    return marks
  }
}
