import { EnvaceError } from "@envace/errors";

/** Trial counts a metric cannot be computed from. */
export class MetricsInputError extends EnvaceError {
  override readonly code = "metrics-input";
}

/** `C(n, k)` as a float (exact for the trial counts benchmarks use). */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) result = (result * (n - i + 1)) / i;
  return result;
}

/**
 * pass^k of one task (Yao et al., 2024): the chance that k trials drawn without replacement
 * from its `trials` all succeed, `C(successes, k) / C(trials, k)`.
 */
export function passHatK(trials: number, successes: number, k: number): number {
  if (trials < k) throw new MetricsInputError(`pass^${k} needs at least ${k} trials, got ${trials}`);
  return binomial(successes, k) / binomial(trials, k);
}

/** One scored trial. */
export interface TrialOutcome {
  readonly taskId: string;
  readonly success: boolean;
}

/**
 * pass^1 … pass^K averaged over tasks, where K is the smallest number of trials any task has
 * (upstream's rule when some trials are missing).
 */
export function passHatKs(outcomes: readonly TrialOutcome[]): Record<number, number> {
  const byTask = new Map<string, { trials: number; successes: number }>();
  for (const outcome of outcomes) {
    const entry = byTask.get(outcome.taskId) ?? { trials: 0, successes: 0 };
    entry.trials++;
    if (outcome.success) entry.successes++;
    byTask.set(outcome.taskId, entry);
  }
  if (byTask.size === 0) return {};
  const maxK = Math.min(...[...byTask.values()].map((entry) => entry.trials));
  const result: Record<number, number> = {};
  for (let k = 1; k <= maxK; k++) {
    let sum = 0;
    for (const entry of byTask.values()) sum += passHatK(entry.trials, entry.successes, k);
    result[k] = sum / byTask.size;
  }
  return result;
}
