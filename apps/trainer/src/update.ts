// Update: one clipped policy-gradient step with AdamW on the scored rows.
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

/**
 * One policy-gradient step on the scored rows: their datums, the clipped loss, AdamW. With a KL
 * term, `reference` (a frozen copy of the weights RL started from) scores every datum first.
 */
export async function policyUpdate(
  backend: TrainingBackend,
  rows: readonly ScoredRow[],
  loss: PolicyLossConfig,
  adam: AdamParams,
  reference?: Pick<TrainingBackend, "forward">,
  /** The rollouts' sampling temperature: the learner (and the reference) score that distribution. */
  scoring: ScoringOptions = {},
): Promise<UpdateResult> {
  const data = rows.filter((s) => s.row.outputTokens.length > 0).map((s) => datumFromRow(s.row, s.advantage));
  if (data.length === 0) return { loss: 0, metrics: {}, tokens: 0 };
  if (loss.klCoef > 0) {
    if (reference === undefined) throw new Error("a KL term needs the reference model's log-probabilities");
    const refs = await reference.forward(data, scoring);
    data.forEach((d, i) => (d.refLogprobs = refs[i]!));
  }
  const result = await backend.forwardBackward(data, { type: "grpo", config: loss }, scoring);
  const optim = await backend.optimStep(adam);
  return { loss: result.loss, metrics: { ...result.metrics, ...optim }, tokens: data.reduce((s, d) => s + d.mask.reduce((a, m) => a + m, 0), 0) };
}
