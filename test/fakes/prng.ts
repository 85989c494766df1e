/** A seeded pseudo-random generator (mulberry32), so property tests are reproducible from their seed. */
export interface Prng {
  /** A float in [0, 1). */
  next (): number
  /** An integer in [min, max], both included. */
  int (min: number, max: number): number
  /** True with probability `p`. */
  chance (p: number): boolean
  pick<T> (items: readonly T[]): T
}

export function createPrng (seed: number): Prng {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: p => next() < p,
    pick: items => items[Math.floor(next() * items.length)]!
  }
}
