/**
 * How per-token losses are reduced to one number.
 *
 * - `token-mean`: mean over every unmasked token of the batch.
 * - `seq-mean-token-mean`: mean over tokens within each row, then mean over rows.
 * - `seq-sum`: sum over tokens within each row, then mean over rows.
 */
export type LossAggregation = "token-mean" | "seq-mean-token-mean" | "seq-sum";

/** The clipped policy-gradient loss shared by every training backend. */
export interface PolicyLossConfig {
  /** Lower clip range: the ratio is clipped to [1 − epsLow, 1 + epsHigh]. */
  epsLow: number;
  epsHigh: number;
  /** Dual-clip constant c (> 1) bounding the loss of negative-advantage tokens, or null for none. */
  dualClip: number | null;
  /** Coefficient of the k3 KL estimator to a reference policy; 0 turns it off. */
  klCoef: number;
  /** Coefficient of the entropy bonus; 0 turns it off. */
  entropyCoef: number;
  aggregation: LossAggregation;
}

/** The paper's settings: clip 0.2, dual clip 3, no KL, no entropy bonus. */
export const defaultPolicyLossConfig: PolicyLossConfig = {
  epsLow: 0.2,
  epsHigh: 0.2,
  dualClip: 3,
  klCoef: 0,
  entropyCoef: 0,
  aggregation: "seq-mean-token-mean",
};
