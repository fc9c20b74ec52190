// Log: the metrics.jsonl record of a training step.
import { advantageMetrics, roleMetrics, type AdvantageBatch } from "@envace/grpo";
import type { RewardVerdict, Trajectory } from "@envace/protocol";
import type { MetricsRecord } from "./run/metrics-log.js";
import type { UpdateResult } from "./update.js";

const HISTOGRAM_EDGES = Array.from({ length: 17 }, (_, i) => -2 + i * 0.25);

/** Counts of values per bin of `edges`; values outside go to the first or last bin. */
export function histogram(values: readonly number[], edges: readonly number[] = HISTOGRAM_EDGES): number[] {
  const counts = new Array<number>(edges.length - 1).fill(0);
  for (const value of values) {
    let bin = edges.findIndex((edge, i) => i > 0 && value < edge) - 1;
    if (bin < 0) bin = value < edges[0]! ? 0 : counts.length - 1;
    counts[bin]! += 1;
  }
  return counts;
}

export interface StepArtifacts {
  step: number;
  batch: AdvantageBatch;
  trajectories: readonly Trajectory[];
  verdicts: ReadonlyMap<string, RewardVerdict>;
  update: UpdateResult;
  environmentCalls: number;
  elapsedSeconds: number;
  stepSeconds: number;
}

/** The `metrics.jsonl` record of one training step. */
export function stepMetrics(a: StepArtifacts): MetricsRecord {
  const scored = [...a.verdicts.values()].flatMap((v) => (v.status === "scored" ? [v.value] : []));
  const roles = roleMetrics(a.batch);
  const byRole = <K extends keyof (typeof roles)[number]>(key: K) => Object.fromEntries(roles.map((m) => [m.role, m[key]]));
  const terminations = Object.create(null) as Record<string, number>;
  const parseErrors: Record<string, number> = { total: 0 };
  for (const t of a.trajectories) {
    const term = t.termination;
    terminations[term.reason] = (terminations[term.reason] ?? 0) + 1;
    if (term.reason === "parse_error" || term.reason === "env_error") {
      parseErrors.total! += 1;
      parseErrors[term.code] = (parseErrors[term.code] ?? 0) + 1;
    }
  }
  const m = a.update.metrics;
  return {
    kind: "train",
    step: a.step,
    elapsed_s: a.elapsedSeconds,
    step_s: a.stepSeconds,
    reward: { mean: mean(scored), ...byRole("rewardMean") },
    success_rate: scored.length === 0 ? 0 : scored.filter((v) => v >= 1 - 1e-9).length / scored.length,
    masked: a.batch.masked.length,
    // Why rollouts were masked (judge failures while scoring or while gating a user turn).
    masked_reasons: a.batch.masked.reduce<Record<string, number>>((counts, m) => ({ ...counts, [m.reason]: (counts[m.reason] ?? 0) + 1 }), {}),
    rows: byRole("rows"),
    length: Object.fromEntries(roles.map((r) => [r.role, r.rows === 0 ? 0 : r.outputTokens / r.rows])),
    advantage: Object.fromEntries(roles.map((r) => [r.role, { mean: r.advantageMean, std: r.advantageStd, min: r.advantageMin, max: r.advantageMax }])),
    advantage_hist: {
      edges: HISTOGRAM_EDGES,
      ...Object.fromEntries(roles.map((r) => [r.role, histogram(a.batch.rows.filter((s) => s.groupRole === r.role).map((s) => s.advantage))])),
    },
    zero_advantage_groups: advantageMetrics(a.batch)["batch/zero_advantage_groups"],
    loss: a.update.loss,
    loss_tokens: a.update.tokens,
    clip_fraction: m["clip_fraction:mean"],
    // Two different divergences, named: to the frozen reference (the KL term), and between the
    // sampler's and the learner's log-probabilities of the sampled tokens (off-policy drift).
    ref_kl: m["ref_kl:mean"],
    sampler_kl: m["sampler_kl:mean"],
    ratio: { mean: m["ratio:mean"], min: m["ratio:min"], max: m["ratio:max"] },
    entropy: m["entropy:mean"],
    grad_norm: m["grad_norm:mean"] ?? m["grad_norm:max"],
    terminations,
    parse_errors: parseErrors,
    env_calls: a.environmentCalls,
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length;
}
