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
export function pairedDifference(before: readonly boolean[], after: readonly boolean[], options: BootstrapOptions = {}): RateInterval {
  if (before.length !== after.length) throw new RangeError(`pairedDifference: ${before.length} outcomes before, ${after.length} after`);
  if (before.length === 0) return { rate: 0, low: -1, high: 1 };
  const one = (b: boolean): TaskCount => ({ hits: Number(b), of: 1 });
  return pairedRatioDifference(before.map(one), after.map(one), options)!;
}

export interface BootstrapOptions {
  /** Resamples of the tasks (default 2,000). */
  resamples?: number;
  /** Seed of the resampling, so a table is reproducible (default 0). */
  seed?: number;
}

/**
 * One task's share of a pooled rate: `hits` of `of` (of a task's probed calls, those whose key set
 * the Rehearse role got right). A task may contribute nothing (`of` 0).
 */
export interface TaskCount {
  hits: number;
  of: number;
}

/**
 * Σhits / Σof over tasks, with a 95% percentile-bootstrap interval that resamples tasks (a
 * cluster bootstrap: the calls of one task are not independent). `null` when no task has a
 * denominator.
 */
export function pooledRate(tasks: readonly TaskCount[], options: BootstrapOptions = {}): RateInterval | null {
  return bootstrapTasks(tasks.length, options, (pick) => ratioOfSums(tasks, pick));
}

/**
 * The difference `after − before` of two pooled rates (`pooledRate`) on the same tasks, with a
 * 95% percentile-bootstrap interval that resamples tasks, each task's pair kept together. The
 * arms may make different calls on a task: the pairing is by task, not by call. `null` when
 * either arm has no denominator at all.
 */
export function pairedRatioDifference(before: readonly TaskCount[], after: readonly TaskCount[], options: BootstrapOptions = {}): RateInterval | null {
  if (before.length !== after.length) throw new RangeError(`pairedRatioDifference: ${before.length} tasks before, ${after.length} after`);
  return bootstrapTasks(before.length, options, (pick) => {
    const b = ratioOfSums(before, pick);
    const a = ratioOfSums(after, pick);
    return a === null || b === null ? null : a - b;
  });
}

/** Σhits / Σof over the tasks `pick(0…n−1)` names, or null when Σof is 0. */
function ratioOfSums(tasks: readonly TaskCount[], pick: (k: number) => number): number | null {
  let hits = 0;
  let of = 0;
  for (let k = 0; k < tasks.length; k++) {
    const task = tasks[pick(k)]!;
    hits += task.hits;
    of += task.of;
  }
  return of === 0 ? null : hits / of;
}

/**
 * `statistic` on the n tasks as they are, and its 95% percentile interval over resamples of them
 * with replacement. A resample where the statistic is undefined (it drew no task with a
 * denominator) is left out, and the percentiles come from the rest.
 */
function bootstrapTasks(n: number, options: BootstrapOptions, statistic: (pick: (k: number) => number) => number | null): RateInterval | null {
  const observed = n === 0 ? null : statistic((k) => k);
  if (observed === null) return null;
  const rng = Rng.fromSeed(options.seed ?? 0);
  const resamples = options.resamples ?? 2000;
  const values: number[] = [];
  const drawn = new Uint32Array(n);
  for (let r = 0; r < resamples; r++) {
    // One draw of tasks per resample, read by both arms of a pair.
    for (let k = 0; k < n; k++) drawn[k] = rng.nextUint32() % n;
    const value = statistic((k) => drawn[k]!);
    if (value !== null) values.push(value);
  }
  values.sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(values.length - 1, Math.max(0, Math.floor(q * values.length)))]!;
  return { rate: observed, low: at(0.025), high: at(0.975) };
}

/** `0.234 [0.170, 0.312]`: a rate and its interval, for tables and logs. */
export function formatInterval({ rate, low, high }: RateInterval, digits = 3): string {
  return `${rate.toFixed(digits)} [${low.toFixed(digits)}, ${high.toFixed(digits)}]`;
}
