import { TrainingInputError } from "./errors.js";
import {
  aggregationWeights,
  cispoSum,
  crossEntropySum,
  droSum,
  importanceSamplingSum,
  lossMetrics,
  policyLoss,
  ppoSum,
  type LossRow,
  type SumLossResult,
} from "@envace/grpo";
import type { Datum, LossFn } from "./backend.js";

/**
 * The loss as a function of the learner's per-token log-probabilities and entropies. The
 * backend computes those with the model, then takes the loss and its gradient from the pure
 * reference implementations in `@envace/grpo`, so every backend optimises the same objective.
 */
export interface Objective {
  loss: number;
  /** ∂loss/∂logprob per datum and position. */
  gradLogprobs: number[][];
  /** ∂loss/∂entropy per datum and position, or null when the loss does not depend on entropy. */
  gradEntropy: number[][] | null;
  metrics: Record<string, number>;
}

export interface TokenScoresRow {
  logprobs: ArrayLike<number>;
  entropies: ArrayLike<number>;
}

function lossRows(data: readonly Datum[], scores: readonly TokenScoresRow[]): LossRow[] {
  return data.map((d, i) => {
    const s = scores[i]!;
    return {
      logprobs: Array.from(s.logprobs),
      samplerLogprobs: d.logprobs,
      advantages: d.advantages,
      mask: d.mask,
      entropy: Array.from(s.entropies),
      ...(d.refLogprobs ? { refLogprobs: d.refLogprobs } : {}),
    };
  });
}

function meanEntropy(rows: readonly LossRow[]): number {
  let weight = 0;
  let total = 0;
  for (const row of rows) {
    row.mask.forEach((m, t) => {
      weight += m;
      total += m * row.entropy![t]!;
    });
  }
  return weight > 0 ? total / weight : 0;
}

/**
 * `loss` on loss rows, by the reference implementation of its type: GRPO's policy loss (with its
 * metrics), or a plain sum (with `loss:sum`). Every backend, local or remote, evaluates it here.
 */
export function referenceLoss(loss: LossFn, rows: readonly LossRow[]): Objective {
  if (loss.type === "grpo") {
    const result = policyLoss(rows, loss.config);
    return {
      loss: result.loss,
      gradLogprobs: result.gradLogprobs,
      gradEntropy: loss.config.entropyCoef > 0 ? result.gradEntropy : null,
      metrics: lossMetrics(result),
    };
  }
  const sum = sumLoss(loss, rows);
  return { loss: sum.loss, gradLogprobs: sum.gradLogprobs, gradEntropy: null, metrics: { "loss:sum": sum.loss } };
}

function sumLoss(loss: Exclude<LossFn, { type: "grpo" }>, rows: readonly LossRow[]): SumLossResult {
  switch (loss.type) {
    case "cross_entropy":
      return crossEntropySum(rows);
    case "importance_sampling":
      return importanceSamplingSum(rows);
    case "ppo":
      return ppoSum(rows, loss.clipLow, loss.clipHigh);
    case "cispo":
      return cispoSum(rows, loss.clipLow, loss.clipHigh);
    case "dro":
      return droSum(rows, loss.beta);
  }
}

/** Evaluate `loss` on `data` given the learner's scores of every position. */
export function evaluateObjective(loss: LossFn, data: readonly Datum[], scores: readonly TokenScoresRow[]): Objective {
  const rows = lossRows(data, scores);
  const objective = referenceLoss(loss, rows);
  if (loss.type === "grpo") return objective;
  const tokens = rows.reduce((n, row) => n + row.mask.filter((m) => m > 0).length, 0);
  return { ...objective, metrics: { ...objective.metrics, "entropy:mean": meanEntropy(rows), "tokens:sum": tokens } };
}

/**
 * The factor that turns a loss aggregated over a subset of the data (one micro-batch) into its
 * share of the loss aggregated over all of it. Every aggregation mode weighs a token by its mask
 * over a normaliser that depends on the batch only (tokens or live rows), so the factor is the
 * same for every token of the subset; it is computed from the reference weights themselves.
 */
export function subsetFactor(loss: LossFn, data: readonly Datum[], subset: readonly number[]): number {
  if (loss.type !== "grpo") return 1;
  const masks = data.map((d) => d.mask);
  const all = aggregationWeights(masks, loss.config.aggregation);
  const part = aggregationWeights(
    subset.map((i) => masks[i]!),
    loss.config.aggregation,
  );
  let factor = 0;
  for (const [k, i] of subset.entries()) {
    for (const [t, w] of part[k]!.entries()) {
      if (w === 0) continue;
      const f = all[i]![t]! / w;
      if (factor === 0) factor = f;
      else if (Math.abs(f - factor) > 1e-9 * Math.abs(factor)) {
        throw new TrainingInputError(`aggregation ${loss.config.aggregation} does not split into micro-batches; raise microbatchTokens`);
      }
    }
  }
  return factor;
}
