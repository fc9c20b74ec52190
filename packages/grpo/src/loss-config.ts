import { z } from "zod";

/**
 * How per-token losses are reduced to one number.
 *
 * - `token-mean`: mean over every unmasked token of the batch (long rows weigh more).
 * - `seq-mean-token-mean`: mean over tokens within each row, then mean over rows (every row
 *   weighs the same). This is what the reference implementation effectively optimises: it runs
 *   verl's `token-mean` on micro-batches of one row and averages the micro-batch gradients.
 * - `seq-sum`: sum over tokens within each row, then mean over rows (verl's
 *   `seq-mean-token-sum`; the Dr. GRPO reduction up to a constant).
 */
export const LossAggregation = z.enum(["token-mean", "seq-mean-token-mean", "seq-sum"]);
export type LossAggregation = z.infer<typeof LossAggregation>;

/** The clipped policy-gradient loss shared by every training backend. */
export const PolicyLossConfig = z.object({
  /** Lower clip range: the ratio is clipped to [1 − epsLow, 1 + epsHigh]. */
  epsLow: z.number().min(0).lt(1),
  epsHigh: z.number().min(0),
  /**
   * Dual-clip constant c (> 1), or null for none. For negative advantages the per-token loss is
   * capped at −c·A, so a token whose ratio exploded cannot dominate the batch.
   */
  dualClip: z.number().gt(1).nullable(),
  /** Coefficient of the k3 KL estimator to a reference policy; 0 turns it off. */
  klCoef: z.number().min(0),
  /** Coefficient of the entropy bonus (subtracted from the loss); 0 turns it off. */
  entropyCoef: z.number().min(0),
  aggregation: LossAggregation,
});
export type PolicyLossConfig = z.infer<typeof PolicyLossConfig>;

/**
 * The paper's settings: clip 0.2 on both sides, dual clip 3, no KL, no entropy bonus, and the
 * reference implementation's effective reduction (mean of per-row token means).
 */
export const defaultPolicyLossConfig: PolicyLossConfig = {
  epsLow: 0.2,
  epsHigh: 0.2,
  dualClip: 3,
  klCoef: 0,
  entropyCoef: 0,
  aggregation: "seq-mean-token-mean",
};
