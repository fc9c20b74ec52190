/**
 * Seeded randomness. Every generated world, task and phrasing draws from an `Rng` whose seed is
 * derived from the caller's seed, so the same seed yields the same tasks on every platform.
 */

const UINT32 = 0x1_0000_0000;

/** A murmur3-style finaliser: spreads every input bit over the 32-bit output. */
function avalanche(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Combine non-negative safe integers into one 32-bit seed. Nearby inputs (seed 1 vs 2, index 7
 * vs 8) give unrelated streams, and inputs above 2^32 keep their high bits.
 */
export function mixSeed(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    if (!Number.isSafeInteger(part) || part < 0) throw new RangeError(`seed parts must be non-negative safe integers, got ${part}`);
    const low = part % UINT32;
    const high = Math.floor(part / UINT32);
    h = avalanche(h ^ avalanche(low));
    h = avalanche(h ^ avalanche(high + 0x632be5ab));
  }
  return h;
}

/** A small, fast generator (mulberry32) with the few draws the domain needs. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 2^32). */
  uint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.uint32() / UINT32;
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) throw new RangeError(`bad integer range [${lo}, ${hi}]`);
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("cannot pick from an empty list");
    return items[this.int(0, items.length - 1)]!;
  }

  /** `count` distinct elements in random order (a partial Fisher–Yates shuffle). */
  sample<T>(items: readonly T[], count: number): T[] {
    if (count > items.length) throw new RangeError(`cannot sample ${count} of ${items.length} items`);
    const pool = [...items];
    for (let i = 0; i < count; i++) {
      const j = this.int(i, pool.length - 1);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    return pool.slice(0, count);
  }
}
