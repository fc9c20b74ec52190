/**
 * Python's `random.Random`: the MT19937 generator seeded as CPython seeds it from an int, and
 * the methods the BFCL environments draw from (`random`, `getrandbits`, `randint`, `uniform`),
 * bit for bit. Seeded environments (message ids, booking ids, temperatures) then produce the
 * values upstream produces.
 */
const N = 624;
const M = 397;

/**
 * The state right after seeding, by seed. Every environment of every entry seeds its generator
 * with one of a few constants; copying 624 words is much cheaper than seeding them again.
 */
const seededStates = new Map<bigint, Uint32Array>();
const SEEDED_STATES_KEPT = 64;

export class PythonRandom {
  private readonly mt = new Uint32Array(N);
  private index = N + 1;

  /** `random.Random(seed)` for an integer seed (CPython uses its absolute value). */
  constructor(seed: number | bigint) {
    let n = typeof seed === "bigint" ? seed : BigInt(seed);
    if (n < 0n) n = -n;
    const seeded = seededStates.get(n);
    if (seeded !== undefined) {
      this.mt.set(seeded);
      this.index = N;
      return;
    }
    const key: number[] = [];
    for (let rest = n; rest > 0n; rest >>= 32n) key.push(Number(rest & 0xffffffffn));
    if (key.length === 0) key.push(0);
    this.seedByArray(key);
    if (seededStates.size < SEEDED_STATES_KEPT) seededStates.set(n, this.mt.slice());
  }

  private seedWith(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.index = N;
  }

  private seedByArray(key: readonly number[]): void {
    this.seedWith(19650218);
    const mt = this.mt;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private twist(): void {
    const mt = this.mt;
    for (let kk = 0; kk < N; kk++) {
      const y = (mt[kk]! & 0x80000000) | (mt[(kk + 1) % N]! & 0x7fffffff);
      mt[kk] = mt[(kk + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.index = 0;
  }

  /** One 32-bit output of the generator. */
  nextUint32(): number {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random()`: a float in [0, 1) with 53 random bits. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `getrandbits(k)`: 32-bit words filled from the least significant end. */
  getrandbits(k: number): bigint {
    if (k < 0) throw new RangeError("number of bits must be non-negative");
    if (k === 0) return 0n;
    if (k <= 32) return BigInt(this.nextUint32() >>> (32 - k));
    let result = 0n;
    let shift = 0n;
    for (let remaining = k; remaining > 0; remaining -= 32) {
      let word = this.nextUint32();
      if (remaining < 32) word >>>= 32 - remaining;
      result |= BigInt(word) << shift;
      shift += 32n;
    }
    return result;
  }

  /** `_randbelow(n)`: uniform in [0, n) by rejection sampling on `n.bit_length()` bits. */
  randbelow(n: bigint): bigint {
    if (n <= 0n) return 0n;
    const k = n.toString(2).length;
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `randint(a, b)`: uniform over the integers a..b inclusive. */
  randint(a: number | bigint, b: number | bigint): bigint {
    const low = BigInt(a);
    const width = BigInt(b) + 1n - low;
    if (width <= 0n) throw new RangeError(`empty range in randint(${a}, ${b})`);
    return low + this.randbelow(width);
  }

  /** `uniform(a, b)`: `a + (b - a) * random()`. */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }
}
