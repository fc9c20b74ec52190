import { TrainingInputError } from "./errors.js";

/**
 * A small seeded pseudo-random generator (xoshiro128**) whose whole state is four 32-bit words,
 * so checkpoints can save it and a resumed run draws exactly the numbers it would have drawn.
 */
export class Rng {
  private readonly s: Uint32Array;

  private constructor(state: Uint32Array) {
    this.s = state;
  }

  /** A generator seeded from any integer (its low 53 bits count). */
  static fromSeed(seed: number): Rng {
    if (!Number.isSafeInteger(seed)) throw new TrainingInputError(`seed must be a safe integer, got ${seed}`);
    // splitmix32 over both halves of the seed spreads nearby seeds to unrelated states.
    let x = (seed >>> 0) ^ Math.imul(Math.floor(seed / 2 ** 32) >>> 0, 0x9e3779b9);
    const state = new Uint32Array(4);
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      state[i] = (z ^ (z >>> 16)) >>> 0;
    }
    if (state.every((w) => w === 0)) state[0] = 1;
    return new Rng(state);
  }

  /** Restore a generator from `state()`. */
  static fromState(state: readonly number[]): Rng {
    if (state.length !== 4 || state.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffffffff)) {
      throw new TrainingInputError(`an Rng state is four unsigned 32-bit integers, got ${JSON.stringify(state)}`);
    }
    if (state.every((w) => w === 0)) throw new TrainingInputError("an Rng state cannot be all zeros");
    return new Rng(Uint32Array.from(state));
  }

  state(): number[] {
    return Array.from(this.s);
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    const s = this.s;
    let s0 = s[0]!;
    let s1 = s[1]!;
    let s2 = s[2]!;
    let s3 = s[3]!;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A standard normal draw (Box–Muller; one draw per call keeps the state simple). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** An independent generator derived from this one (advances this one by two draws). */
  fork(): Rng {
    return Rng.fromSeed(this.nextUint32() * 2 ** 21 + (this.nextUint32() >>> 11));
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * Uniform draws in [0, 1) from `Rng.fromSeed(seed)`, as the plain function `sampleToken` takes:
 * the same seed gives the same stream here as in the tiny model's sampler.
 */
export function seededRandom(seed: number): () => number {
  const rng = Rng.fromSeed(seed);
  return () => rng.next();
}
