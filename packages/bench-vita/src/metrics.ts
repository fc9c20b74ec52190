import { binomial, passHatKs } from "@envace/rewards";

/** One scored trial of a task; `reward` is 1 or 0 (masked trials are left out before this). */
export interface VitaTrial {
  readonly taskId: string;
  readonly reward: number;
}

/** Upstream's `pass_at_k`: 1 − C(n − c, k) / C(n, k), 0 when fewer than k trials. */
export function passAtK(trials: number, successes: number, k: number): number {
  if (trials < k || successes > trials) return 0;
  if (trials - successes < k) return 1;
  return 1 - binomial(trials - successes, k) / binomial(trials, k);
}

/** Upstream's `average_at_k`: the mean reward of all the task's trials, once it has at least k. */
export function averageAtK(rewards: readonly number[], k: number): number {
  if (rewards.length < k || k === 0) return 0;
  return rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
}

export interface VitaMetrics {
  readonly avgReward: number;
  /** pass^1 … pass^K, K the fewest trials any task has. */
  readonly passHatK: Record<number, number>;
  /** pass@1 … pass@N and avg@1 … avg@N, N the trials asked for, over tasks with at least k trials. */
  readonly passAtK: Record<number, number>;
  readonly avgAtK: Record<number, number>;
}

/** Upstream's `compute_metrics` for rewards (success is a reward of exactly 1). */
export function vitaMetrics(trials: readonly VitaTrial[], trialsAsked: number): VitaMetrics {
  const byTask = new Map<string, number[]>();
  for (const trial of trials) byTask.set(trial.taskId, [...(byTask.get(trial.taskId) ?? []), trial.reward]);
  const passAt: Record<number, number> = {};
  const avgAt: Record<number, number> = {};
  for (let k = 1; k <= trialsAsked; k++) {
    const eligible = [...byTask.values()].filter((rewards) => rewards.length >= k);
    if (eligible.length === 0) continue;
    passAt[k] = eligible.reduce((sum, rewards) => sum + passAtK(rewards.length, rewards.filter((r) => r === 1).length, k), 0) / eligible.length;
    avgAt[k] = eligible.reduce((sum, rewards) => sum + averageAtK(rewards, k), 0) / eligible.length;
  }
  return {
    avgReward: trials.length === 0 ? 0 : trials.reduce((sum, trial) => sum + trial.reward, 0) / trials.length,
    passHatK: passHatKs(trials.map((trial) => ({ taskId: trial.taskId, success: trial.reward === 1 }))),
    passAtK: passAt,
    avgAtK: avgAt,
  };
}
