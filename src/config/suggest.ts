/** "Did you mean ...?" for misspelt keys and aliases. */

/** Edit distance (insertions, deletions, substitutions), two rows at a time. */
export function levenshtein (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * The candidate closest to `word`, if it is close enough to be a likely typo: one edit for short words,
 * up to three for long ones (`topic` → `topics`, `offset.syncs.topic.location` → `offset-syncs.topic.location`).
 * A case-only difference always counts, since aliases and keys are case-sensitive; words of up to three
 * characters (aliases such as `A`, `dc1`) get no other suggestion, as every such word is one edit from another.
 */
export function closest (word: string, candidates: Iterable<string>): string | undefined {
  const allowed = word.length <= 3 ? 0.5 : Math.max(1, Math.min(3, Math.floor(word.length / 5)))
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    if (candidate === word) continue
    const distance = candidate.toLowerCase() === word.toLowerCase() ? 0.5 : levenshtein(word, candidate)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return bestDistance <= allowed ? best : undefined
}

/** ` (did you mean X?)`, or nothing. */
export function didYouMean (suggestion: string | undefined): string {
  return suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`
}
