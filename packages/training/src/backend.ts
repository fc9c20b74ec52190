import type { PolicyLossConfig } from "@envace/grpo";
import type { Sampler } from "@envace/protocol";

/**
 * One training sequence, shaped like a Tinker `Datum`. Position t of `tokens` predicts
 * `targetTokens[t]`; every per-token array has the length of `tokens`.
 */
export interface Datum {
  tokens: number[];
  targetTokens: number[];
  /** Sampler log-probability of each target token; 0 where `mask` is 0. */
  logprobs: number[];
  /** Per-token advantage; 0 on prompt and observation positions. */
  advantages: number[];
  /** 1 on the policy's own tokens (the loss applies), 0 elsewhere. Also the weights of `cross_entropy`. */
  mask: number[];
  /** Reference-policy log-probability of each target token, for the KL term. */
  refLogprobs?: number[];
}

/** The losses a backend computes. Tinker's own names, plus the full role-wise GRPO loss. */
export type LossFn =
  | { type: "cross_entropy" }
  | { type: "importance_sampling" }
  | { type: "ppo"; clipLow: number; clipHigh: number }
  /** Clipped importance-sampling weight (held constant) × advantage × log-probability; ratio bounds as for `ppo`. */
  | { type: "cispo"; clipLow: number; clipHigh: number }
  /** Log-probability × advantage less ½·β·(log-ratio)², Tinker's `dro`. */
  | { type: "dro"; beta: number }
  | { type: "grpo"; config: PolicyLossConfig };

export interface ForwardBackwardResult {
  /** Learner log-probability of each target token, one array per datum. */
  logprobs: number[][];
  /** The reduced loss whose gradient was accumulated. */
  loss: number;
  /** Diagnostics such as `clip_fraction:mean`, `entropy:mean`, `kl:mean` (Tinker's `name:reduction` keys). */
  metrics: Record<string, number>;
}

/** AdamW with decoupled weight decay and global-norm gradient clipping (0 turns clipping off). */
export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  gradClipNorm: number;
}

export const defaultAdamParams: AdamParams = {
  learningRate: 1e-4,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-8,
  weightDecay: 0,
  gradClipNorm: 1,
};

/**
 * How a backend scores tokens. `temperature` (default 1): score softmax(logits / temperature), the
 * distribution a sampler at that temperature draws from, so the policy ratio of a rollout sampled
 * at temperature T starts at exactly 1 (verl divides the logits by the rollout temperature the
 * same way). Top-p and top-k truncation are not part of it: the trainer refuses them for training
 * rollouts.
 */
export interface ScoringOptions {
  temperature?: number;
}

/**
 * A training backend, shaped like the Tinker protocol so the in-process CPU backend and a
 * remote Tinker or SkyRL tx server are interchangeable.
 */
export interface TrainingBackend {
  /** Compute the loss over `data` and accumulate its gradient. */
  forwardBackward(data: Datum[], loss: LossFn, options?: ScoringOptions): Promise<ForwardBackwardResult>;
  /** Learner log-probabilities of the target tokens, without accumulating gradients. */
  forward(data: Datum[], options?: ScoringOptions): Promise<number[][]>;
  /** Apply the accumulated gradients and clear them. */
  optimStep(adam: AdamParams): Promise<Record<string, number>>;
  /** Snapshot the current weights and return a sampler that uses them. */
  saveWeightsForSampler(name?: string): Promise<Sampler>;
}
