import { clippedTokenLoss, LOG_RATIO_LIMIT, type LossRow } from "./loss.js";

/**
 * Tinker's built-in losses, as pure functions with Tinker's semantics: a plain **sum** over
 * tokens and rows, nothing averaged. A backend's `cross_entropy`, `importance_sampling` and
 * `ppo` are tested against these; the mask gates every position (the hosted service has no mask
 * and relies on zero advantages and zero weights instead, which gives the same sum).
 */
export interface SumLossResult {
  loss: number;
  /** ∂loss/∂logprobs[t] for every row and position. */
  gradLogprobs: number[][];
}

export type SumLossRow = Pick<LossRow, "logprobs" | "samplerLogprobs" | "advantages" | "mask">;

/** `cross_entropy`: −Σ mask·logprob (the mask is Tinker's `weights`). */
export function crossEntropySum(rows: readonly Pick<LossRow, "logprobs" | "mask">[]): SumLossResult {
  let loss = 0;
  const gradLogprobs = rows.map((row) =>
    row.mask.map((m, t) => {
      loss -= m * row.logprobs[t]!;
      return -m;
    }),
  );
  return { loss, gradLogprobs };
}

/** `importance_sampling`: −Σ mask·ratio·advantage, ratio = exp(logprob − samplerLogprob). */
export function importanceSamplingSum(rows: readonly SumLossRow[]): SumLossResult {
  let loss = 0;
  const gradLogprobs = rows.map((row) =>
    row.mask.map((m, t) => {
      if (m <= 0) return 0;
      const raw = row.logprobs[t]! - row.samplerLogprobs[t]!;
      const logRatio = Math.min(LOG_RATIO_LIMIT, Math.max(-LOG_RATIO_LIMIT, raw));
      const ratio = Math.exp(logRatio);
      const a = row.advantages[t]!;
      loss -= m * ratio * a;
      return logRatio === raw ? -m * ratio * a : 0;
    }),
  );
  return { loss, gradLogprobs };
}

/**
 * `ppo`: −Σ mask·min(ratio·A, clip(ratio, clipLow, clipHigh)·A). The thresholds are ratio bounds
 * (Tinker's defaults 0.8 and 1.2), not ε.
 */
export function ppoSum(rows: readonly SumLossRow[], clipLow: number, clipHigh: number): SumLossResult {
  const clip = { epsLow: 1 - clipLow, epsHigh: clipHigh - 1, dualClip: null };
  let loss = 0;
  const gradLogprobs = rows.map((row) =>
    row.mask.map((m, t) => {
      if (m <= 0) return 0;
      const token = clippedTokenLoss(row.logprobs[t]!, row.samplerLogprobs[t]!, row.advantages[t]!, clip);
      loss += m * token.loss;
      return m * token.grad;
    }),
  );
  return { loss, gradLogprobs };
}

/**
 * `cispo`: −Σ mask·sg(clip(ratio, clipLow, clipHigh))·logprob·A. The clipped ratio is a weight held
 * constant for the gradient (stop-gradient), so every token keeps a gradient, −mask·clipped·A, even
 * where the ratio is clipped (Tinker's defaults: 0 and 4).
 */
export function cispoSum(rows: readonly SumLossRow[], clipLow: number, clipHigh: number): SumLossResult {
  let loss = 0;
  const gradLogprobs = rows.map((row) =>
    row.mask.map((m, t) => {
      if (m <= 0) return 0;
      const logRatio = Math.min(LOG_RATIO_LIMIT, Math.max(-LOG_RATIO_LIMIT, row.logprobs[t]! - row.samplerLogprobs[t]!));
      const weight = Math.min(clipHigh, Math.max(clipLow, Math.exp(logRatio)));
      const a = row.advantages[t]!;
      loss -= m * weight * row.logprobs[t]! * a;
      return -m * weight * a;
    }),
  );
  return { loss, gradLogprobs };
}

/**
 * `dro`: −Σ mask·(logprob·A − ½·β·(logprob − samplerLogprob)²), a quadratic penalty on the log-ratio
 * in place of clipping; its gradient is −mask·(A − β·(logprob − samplerLogprob)).
 */
export function droSum(rows: readonly SumLossRow[], beta: number): SumLossResult {
  let loss = 0;
  const gradLogprobs = rows.map((row) =>
    row.mask.map((m, t) => {
      if (m <= 0) return 0;
      const lp = row.logprobs[t]!;
      const delta = lp - row.samplerLogprobs[t]!;
      const a = row.advantages[t]!;
      loss -= m * (lp * a - 0.5 * beta * delta * delta);
      return -m * (a - beta * delta);
    }),
  );
  return { loss, gradLogprobs };
}
