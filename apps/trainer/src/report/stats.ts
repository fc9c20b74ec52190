import { Rng } from "@envace/training";

/** A rate with its 95% confidence interval. */
export interface RateInterval {
  rate: number;
  low: number;
  high: number;
}

/** z of a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/**
 * The Wilson score interval of `successes` out of `n` (95%). Unlike the normal approximation it
 * stays inside [0, 1] and is honest at rates near 0 or 1, where small evaluations live.
 */
export function wilsonInterval(successes: number, n: number, z = Z95): RateInterval {
  if (!(Number.isInteger(n) && n >= 0 && Number.isInteger(successes) && successes >= 0 && successes <= n)) {
    throw new RangeError(`wilsonInterval: need integers 0 ≤ successes ≤ n, got ${successes} of ${n}`);
  }
  if (n === 0) return { rate: 0, low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // At 0 or n successes one end is exactly 0 or 1; rounding must not move it.
  return { rate: p, low: successes === 0 ? 0 : Math.max(0, centre - half), high: successes === n ? 1 : Math.min(1, centre + half) };
}

/**
 * The difference `after − before` of two success rates measured on the same tasks, with a 95%
 * percentile-bootstrap interval that resamples tasks (keeping each task's pair together). Pass
 * several seeds' pairs concatenated to pool them: tasks are the unit either way.
 */
export function pairedDifference(before: readonly boolean[], after: readonly boolean[], options: { resamples?: number; seed?: number } = {}): RateInterval {
  if (before.length !== after.length) throw new RangeError(`pairedDifference: ${before.length} outcomes before, ${after.length} after`);
  const n = before.length;
  if (n === 0) return { rate: 0, low: -1, high: 1 };
  const deltas = before.map((b, i) => Number(after[i]) - Number(b));
  const mean = (pick: (k: number) => number) => {
    let sum = 0;
    for (let k = 0; k < n; k++) sum += deltas[pick(k)]!;
    return sum / n;
  };
  const rng = Rng.fromSeed(options.seed ?? 0);
  const resamples = options.resamples ?? 2000;
  const means = Array.from({ length: resamples }, () => mean(() => rng.nextUint32() % n)).sort((a, b) => a - b);
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  return { rate: mean((k) => k), low: at(0.025), high: at(0.975) };
}

/** `0.234 [0.170, 0.312]`: a rate and its interval, for tables and logs. */
export function formatInterval({ rate, low, high }: RateInterval, digits = 3): string {
  return `${rate.toFixed(digits)} [${low.toFixed(digits)}, ${high.toFixed(digits)}]`;
}
