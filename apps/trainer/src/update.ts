// Update: clipped policy-gradient steps with AdamW on the scored rows, the whole step at once or
// in mini-batches of whole task groups (PPO-style).
import type { PolicyLossConfig, ScoredRow } from "@envace/grpo";
import { datumFromRow, type AdamParams, type ScoringOptions, type TrainingBackend } from "@envace/training";
import type { ActorConfig } from "./config/schema.js";

export function adamParams(learningRate: number, actor: ActorConfig): AdamParams {
  return { learningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: actor.weight_decay, gradClipNorm: actor.grad_clip };
}

export function policyLossConfig(actor: ActorConfig): PolicyLossConfig {
  return {
    epsLow: actor.clip_ratio_low,
    epsHigh: actor.clip_ratio_high,
    dualClip: actor.clip_ratio_c,
    klCoef: actor.kl_coef,
    entropyCoef: actor.entropy_coeff,
    aggregation: actor.loss_agg_mode,
  };
}

export interface UpdateResult {
  loss: number;
  metrics: Record<string, number>;
  /** Loss tokens (output tokens of the rows trained). */
  tokens: number;
}

/** How a step's rows are taken: `size` tasks' groups per optimizer step (null: all), `epochs` passes. */
export interface MiniBatching {
  size: number | null;
  epochs: number;
}

/**
 * Split rows into mini-batches of `size` tasks each, in the order the tasks first appear, so a
 * group never straddles two updates. null: one batch of everything.
 */
export function miniBatches<T extends { row: { taskId: string } }>(rows: readonly T[], size: number | null): T[][] {
  if (size === null) return rows.length > 0 ? [[...rows]] : [];
  const byTask = new Map<string, T[]>();
  for (const r of rows) {
    const group = byTask.get(r.row.taskId);
    if (group) group.push(r);
    else byTask.set(r.row.taskId, [r]);
  }
  const groups = [...byTask.values()];
  const batches: T[][] = [];
  for (let i = 0; i < groups.length; i += size) batches.push(groups.slice(i, i + size).flat());
  return batches;
}

/**
 * The policy-gradient steps of one training step: for each epoch, each mini-batch's datums, the
 * clipped loss against the sampler's log-probabilities, AdamW. The loss is the mean over the
 * updates, each metric combined by its reduction. With a KL term, `reference` (a frozen copy of
 * the weights RL started from) scores every datum first.
 */
export async function policyUpdate(
  backend: TrainingBackend,
  rows: readonly ScoredRow[],
  loss: PolicyLossConfig,
  adam: AdamParams,
  reference?: Pick<TrainingBackend, "forward">,
  /** The rollouts' sampling temperature: the learner (and the reference) score that distribution. */
  scoring: ScoringOptions = {},
  batching: MiniBatching = { size: null, epochs: 1 },
): Promise<UpdateResult> {
  const batches = miniBatches(
    rows.filter((s) => s.row.outputTokens.length > 0),
    batching.size,
  ).map((batch) => batch.map((s) => datumFromRow(s.row, s.advantage)));
  if (batches.length === 0) return { loss: 0, metrics: {}, tokens: 0 };
  if (loss.klCoef > 0) {
    if (reference === undefined) throw new Error("a KL term needs the reference model's log-probabilities");
    for (const data of batches) {
      const refs = await reference.forward(data, scoring);
      data.forEach((d, i) => (d.refLogprobs = refs[i]!));
    }
  }
  const losses: number[] = [];
  const metrics: Record<string, number>[] = [];
  for (let epoch = 0; epoch < batching.epochs; epoch++) {
    for (const data of batches) {
      const result = await backend.forwardBackward(data, { type: "grpo", config: loss }, scoring);
      const optim = await backend.optimStep(adam);
      losses.push(result.loss);
      metrics.push({ ...result.metrics, ...optim });
    }
  }
  const tokens = batches.flat().reduce((s, d) => s + d.mask.reduce((a, m) => a + m, 0), 0);
  return { loss: mean(losses), metrics: combineMetrics(metrics), tokens };
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The updates' metrics as one step's, each by the reduction its name carries (Tinker's
 * `name:reduction`): `:max` the largest, `:min` the smallest, `:sum` the total, anything else the mean.
 */
function combineMetrics(updates: readonly Record<string, number>[]): Record<string, number> {
  const keys = new Set(updates.flatMap((m) => Object.keys(m)));
  return Object.fromEntries(
    [...keys].map((key) => {
      const values = updates.flatMap((m) => (key in m ? [m[key]!] : []));
      if (key.endsWith(":max")) return [key, Math.max(...values)];
      if (key.endsWith(":min")) return [key, Math.min(...values)];
      if (key.endsWith(":sum")) return [key, values.reduce((a, b) => a + b, 0)];
      return [key, mean(values)];
    }),
  );
}
