import { EnvaceError } from "@envace/errors";
import type { LossAggregation, PolicyLossConfig } from "./loss-config.js";

/**
 * One row of the loss, position by position. Every array has the row's length; position t
 * scores the learner's log-probability of the token it predicts.
 */
export interface LossRow {
  /** Learner log-probability of each target token (the quantity the gradient is taken against). */
  logprobs: readonly number[];
  /** Sampler log-probability of each target token (the "old" policy of PPO). */
  samplerLogprobs: readonly number[];
  advantages: readonly number[];
  /** Loss weight of each position: 1 on the policy's own tokens, 0 on prompt and observation. */
  mask: readonly number[];
  /** Reference-policy log-probabilities; required when `klCoef` > 0. */
  refLogprobs?: readonly number[];
  /** Entropy of the learner's full next-token distribution; required when `entropyCoef` > 0. */
  entropy?: readonly number[];
}

/** Diagnostics of one loss evaluation: means over loss tokens, weighted by the mask. */
export interface PolicyLossDiagnostics {
  /** Positions with a non-zero mask. */
  tokens: number;
  /** Rows with at least one such position. */
  rows: number;
  /** Fraction of tokens where the ratio clip binds (the clipped surrogate is the larger loss). */
  clipFraction: number;
  /** Fraction of tokens where the dual clip binds (negative advantage, ratio above c). */
  dualClipFraction: number;
  ratioMean: number;
  ratioMin: number;
  ratioMax: number;
  /** k1 estimate of KL(sampler ‖ learner): mean of (sampler − learner) log-probability. */
  samplerKl: number;
  /** Mean k3 KL to the reference policy, when reference log-probabilities were given. */
  refKl: number | null;
  /** Mean entropy, when entropies were given. */
  entropy: number | null;
}

export interface PolicyLossResult {
  /** `terms.policy + klCoef·terms.kl − entropyCoef·terms.entropy`. */
  loss: number;
  /** Each term aggregated with the configured reduction, before its coefficient. */
  terms: { policy: number; kl: number; entropy: number };
  /** ∂loss/∂logprobs[t] for every row and position (0 outside the mask). */
  gradLogprobs: number[][];
  /** ∂loss/∂entropy[t] for every row and position (0 outside the mask). */
  gradEntropy: number[][];
  diagnostics: PolicyLossDiagnostics;
}

/** The log-ratio is clamped to ±20 before exponentiation so a stray token cannot overflow. */
export const LOG_RATIO_LIMIT = 20;
/** The k3 estimate is clamped to ±10 per token, as verl's `low_var_kl`. */
export const K3_LIMIT = 10;

/**
 * The weight of every position under `aggregation`, so that an aggregated loss is
 * Σ weight·tokenLoss. Rows whose mask is all zero carry no weight and are not counted as rows.
 */
export function aggregationWeights(masks: readonly (readonly number[])[], aggregation: LossAggregation): number[][] {
  const rowTotals = masks.map((mask) => mask.reduce((sum, m) => sum + m, 0));
  const liveRows = rowTotals.filter((total) => total > 0).length;
  const allTokens = rowTotals.reduce((sum, total) => sum + total, 0);
  return masks.map((mask, i) => {
    const rowTotal = rowTotals[i]!;
    if (rowTotal <= 0) return mask.map(() => 0);
    switch (aggregation) {
      case "token-mean":
        return mask.map((m) => m / allTokens);
      case "seq-mean-token-mean":
        return mask.map((m) => m / (rowTotal * liveRows));
      case "seq-sum":
        return mask.map((m) => m / liveRows);
    }
  });
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** Loss rows whose arrays disagree in length, or that lack a term the configuration needs. */
export class LossInputError extends EnvaceError {
  override readonly code = "loss-input";
}

/**
 * The first of `arrays` (per-token arrays by name, absent ones skipped) whose length is not `n`:
 * what a loss row, or a datum that becomes one, is refused for.
 */
export function lengthMismatch(n: number, arrays: Readonly<Record<string, readonly number[] | undefined>>): { name: string; length: number } | undefined {
  for (const [name, values] of Object.entries(arrays)) {
    if (values !== undefined && values.length !== n) return { name, length: values.length };
  }
  return undefined;
}

function checkRow(row: LossRow, index: number, needRef: boolean, needEntropy: boolean): void {
  const n = row.mask.length;
  const { logprobs, samplerLogprobs, advantages, refLogprobs, entropy } = row;
  const mismatch = lengthMismatch(n, { logprobs, samplerLogprobs, advantages, refLogprobs, entropy });
  if (mismatch) throw new LossInputError(`loss row ${index}: ${mismatch.name} has ${mismatch.length} entries, mask has ${n}`);
  if (row.mask.some((m) => !(m >= 0))) throw new LossInputError(`loss row ${index}: mask entries must be non-negative`);
  if (needRef && !row.refLogprobs) throw new LossInputError(`loss row ${index}: klCoef > 0 needs refLogprobs`);
  if (needEntropy && !row.entropy) throw new LossInputError(`loss row ${index}: entropyCoef > 0 needs entropy`);
}

/** One position of the clipped surrogate: its loss, ∂loss/∂logprob, and which clip bound. */
export function clippedTokenLoss(
  logprob: number,
  samplerLogprob: number,
  advantage: number,
  config: Pick<PolicyLossConfig, "epsLow" | "epsHigh" | "dualClip">,
): { loss: number; grad: number; ratio: number; clipped: boolean; dualClipped: boolean } {
  const rawLogRatio = logprob - samplerLogprob;
  const logRatio = clamp(rawLogRatio, -LOG_RATIO_LIMIT, LOG_RATIO_LIMIT);
  const ratioGrad = logRatio === rawLogRatio ? 1 : 0;
  const ratio = Math.exp(logRatio);
  const unclipped = -advantage * ratio;
  const clippedLoss = -advantage * clamp(ratio, 1 - config.epsLow, 1 + config.epsHigh);
  const clipped = clippedLoss > unclipped;
  let loss = Math.max(unclipped, clippedLoss);
  let grad = clipped ? 0 : -advantage * ratio * ratioGrad;
  let dualClipped = false;
  if (config.dualClip !== null && advantage < 0) {
    const cap = -advantage * config.dualClip;
    if (loss > cap) {
      dualClipped = true;
      loss = cap;
      grad = 0;
    }
  }
  return { loss, grad, ratio, clipped, dualClipped };
}

/** One position of verl's `low_var_kl` (k3): exp(ref − lp) − (ref − lp) − 1, and ∂/∂lp. */
export function k3TokenKl(logprob: number, refLogprob: number): { kl: number; grad: number } {
  const rawDiff = refLogprob - logprob;
  const diff = clamp(rawDiff, -LOG_RATIO_LIMIT, LOG_RATIO_LIMIT);
  const raw = Math.exp(diff) - diff - 1;
  const kl = clamp(raw, -K3_LIMIT, K3_LIMIT);
  const grad = diff === rawDiff && kl === raw ? 1 - Math.exp(diff) : 0;
  return { kl, grad };
}

/**
 * The role-wise GRPO loss as a pure function: the reference every training backend is tested
 * against. Per token: the clipped importance-weighted surrogate (ε_low/ε_high, dual clip for
 * negative advantages), plus `klCoef`·k3 KL to the reference policy, minus `entropyCoef`·entropy;
 * each term reduced with `config.aggregation`. Returns the loss, its gradient with respect to the
 * learner's log-probabilities and entropies, and diagnostics.
 */
export function policyLoss(rows: readonly LossRow[], config: PolicyLossConfig): PolicyLossResult {
  rows.forEach((row, i) => {
    checkRow(row, i, config.klCoef > 0, config.entropyCoef > 0);
  });
  const weights = aggregationWeights(
    rows.map((row) => row.mask),
    config.aggregation,
  );
  let policy = 0;
  let kl = 0;
  let entropy = 0;
  const stats = new TokenStats();
  const gradLogprobs: number[][] = [];
  const gradEntropy: number[][] = [];
  rows.forEach((row, i) => {
    const w = weights[i]!;
    const gLp = new Array<number>(row.mask.length).fill(0);
    const gH = new Array<number>(row.mask.length).fill(0);
    row.mask.forEach((m, t) => {
      if (m <= 0) return;
      const lp = row.logprobs[t]!;
      const token = clippedTokenLoss(lp, row.samplerLogprobs[t]!, row.advantages[t]!, config);
      policy += w[t]! * token.loss;
      let grad = token.grad;
      let tokenKl: number | null = null;
      if (row.refLogprobs) {
        const k3 = k3TokenKl(lp, row.refLogprobs[t]!);
        tokenKl = k3.kl;
        kl += w[t]! * k3.kl;
        grad += config.klCoef * k3.grad;
      }
      const tokenEntropy = row.entropy ? row.entropy[t]! : null;
      if (tokenEntropy !== null) {
        entropy += w[t]! * tokenEntropy;
        gH[t] = -config.entropyCoef * w[t]!;
      }
      gLp[t] = w[t]! * grad;
      stats.add(m, token.ratio, token.clipped, token.dualClipped, row.samplerLogprobs[t]! - lp, tokenKl, tokenEntropy);
    });
    gradLogprobs.push(gLp);
    gradEntropy.push(gH);
  });
  return {
    loss: policy + config.klCoef * kl - config.entropyCoef * entropy,
    terms: { policy, kl, entropy },
    gradLogprobs,
    gradEntropy,
    diagnostics: stats.summary(
      rows.filter((row) => row.mask.some((m) => m > 0)).length,
      rows.some((row) => row.refLogprobs !== undefined),
      rows.some((row) => row.entropy !== undefined),
    ),
  };
}

class TokenStats {
  private weight = 0;
  private tokens = 0;
  private clipped = 0;
  private dualClipped = 0;
  private ratio = 0;
  private ratioMin = Infinity;
  private ratioMax = -Infinity;
  private samplerKl = 0;
  private refKl = 0;
  private entropy = 0;

  add(weight: number, ratio: number, clipped: boolean, dualClipped: boolean, samplerKl: number, refKl: number | null, entropy: number | null): void {
    this.weight += weight;
    this.tokens += 1;
    this.clipped += clipped ? weight : 0;
    this.dualClipped += dualClipped ? weight : 0;
    this.ratio += weight * ratio;
    this.ratioMin = Math.min(this.ratioMin, ratio);
    this.ratioMax = Math.max(this.ratioMax, ratio);
    this.samplerKl += weight * samplerKl;
    this.refKl += weight * (refKl ?? 0);
    this.entropy += weight * (entropy ?? 0);
  }

  summary(rows: number, hasRef: boolean, hasEntropy: boolean): PolicyLossDiagnostics {
    const mean = (total: number) => (this.weight > 0 ? total / this.weight : 0);
    return {
      tokens: this.tokens,
      rows,
      clipFraction: mean(this.clipped),
      dualClipFraction: mean(this.dualClipped),
      ratioMean: mean(this.ratio),
      ratioMin: this.tokens > 0 ? this.ratioMin : 0,
      ratioMax: this.tokens > 0 ? this.ratioMax : 0,
      samplerKl: mean(this.samplerKl),
      refKl: hasRef ? mean(this.refKl) : null,
      entropy: hasEntropy ? mean(this.entropy) : null,
    };
  }
}

/**
 * The diagnostics and terms as metrics with Tinker's `name:reduction` keys, ready to log or to
 * return from a backend's `forwardBackward`.
 */
export function lossMetrics(result: PolicyLossResult): Record<string, number> {
  const d = result.diagnostics;
  const metrics: Record<string, number> = {
    "loss:mean": result.loss,
    "policy_loss:mean": result.terms.policy,
    "clip_fraction:mean": d.clipFraction,
    "dual_clip_fraction:mean": d.dualClipFraction,
    "ratio:mean": d.ratioMean,
    "ratio:min": d.ratioMin,
    "ratio:max": d.ratioMax,
    "sampler_kl:mean": d.samplerKl,
    "tokens:sum": d.tokens,
  };
  if (d.refKl !== null) metrics["ref_kl:mean"] = d.refKl;
  if (d.entropy !== null) metrics["entropy:mean"] = d.entropy;
  return metrics;
}
