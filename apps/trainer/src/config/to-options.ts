// The one translation of the snake_case `envace train` config into the camelCase options of the
// libraries it drives: one function per section, so a key is renamed (or its sign turned) here alone.
import type { AdvantageConfigInput, PolicyLossConfig } from "@envace/grpo";
import type { BudgetLimits } from "@envace/grounding";
import type { SamplingParamsInput } from "@envace/protocol";
import type { TinkerConnectOptions, TrainingClientOptions } from "@envace/tinker";
import type { AdamParams, ScoringOptions } from "@envace/training";
import type { UnfoldLimitsInput } from "@envace/trajectory";
import { cosineSchedule, type SftOptions } from "../sft.js";
import type { MiniBatching } from "../update.js";
import type { GroundingConfig } from "./grounding.js";
import type { ActorConfig, AlgorithmConfig, BackendConfig, EvalConfig, RolloutConfig, SftConfig } from "./schema.js";

/**
 * The advantages' options. Sign convention: the config's `algorithm.invalid_output_penalty` is a
 * reward, ≤ 0, added to an invalid row (verl's habit: a penalty reads as the reward it gives);
 * `@envace/grpo`'s `invalidPenalty` is an amount ≥ 0 subtracted from the row's score. So the one
 * is the negation of the other: -0.1 in the config subtracts 0.1.
 */
export function advantageOptions(algorithm: AlgorithmConfig, rollout: Pick<RolloutConfig, "rollouts_per_task">): AdvantageConfigInput {
  return {
    baseline: algorithm.baseline,
    roleWise: algorithm.role_wise,
    normalizeStd: algorithm.norm_adv_by_std,
    invalidPenalty: -algorithm.invalid_output_penalty,
    groupSize: rollout.rollouts_per_task,
  };
}

/** The clipped policy loss, under `@envace/grpo`'s names for verl's. */
export function policyLossOptions(actor: ActorConfig): PolicyLossConfig {
  return {
    epsLow: actor.clip_ratio_low,
    epsHigh: actor.clip_ratio_high,
    dualClip: actor.clip_ratio_c,
    klCoef: actor.kl_coef,
    entropyCoef: actor.entropy_coeff,
    aggregation: actor.loss_agg_mode,
  };
}

/** AdamW with the actor's decay and clipping, at `learningRate` (the actor's own, or a supervised stage's). */
export function adamOptions(actor: Pick<ActorConfig, "weight_decay" | "grad_clip">, learningRate: number): AdamParams {
  return { learningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: actor.weight_decay, gradClipNorm: actor.grad_clip };
}

/** How a step's rows are split into optimizer steps (`ppo_mini_batch_size` tasks each, `ppo_epochs` passes). */
export function miniBatching(actor: Pick<ActorConfig, "ppo_mini_batch_size" | "ppo_epochs">): MiniBatching {
  return { size: actor.ppo_mini_batch_size, epochs: actor.ppo_epochs };
}

/** The limits of one rollout, training's and held-out evaluation's alike. */
export function rolloutLimits(rollout: Pick<RolloutConfig, "max_turns" | "max_response_tokens" | "max_prompt_tokens">): UnfoldLimitsInput {
  return { maxTurns: rollout.max_turns, maxResponseTokens: rollout.max_response_tokens, maxPromptTokens: rollout.max_prompt_tokens };
}

/** How training rollouts sample (every role alike; the caller adds each rollout's seed). */
export function rolloutSampling(rollout: Pick<RolloutConfig, "temperature" | "top_p">): SamplingParamsInput {
  return { temperature: rollout.temperature, topP: rollout.top_p };
}

/** How the learner scores rows: at the temperature the rollouts were sampled at. */
export function scoringOptions(rollout: Pick<RolloutConfig, "temperature">): ScoringOptions {
  return { temperature: rollout.temperature };
}

/** How the Act role samples in held-out evaluations. */
export function evalSampling(evaluation: Pick<EvalConfig, "temperature" | "top_p">): SamplingParamsInput {
  return { temperature: evaluation.temperature, topP: evaluation.top_p };
}

/**
 * One supervised stage (the curriculum's or the last): its epochs and learning rate, the
 * section's batch size, and with `lr_schedule: cosine` a warm-up then cosine decay (`schedule`).
 */
export function sftStageOptions(
  stage: Pick<SftConfig, "epochs" | "lr" | "lr_schedule">,
  sft: Pick<SftConfig, "batch_size" | "warmup_ratio">,
  actor: Pick<ActorConfig, "weight_decay" | "grad_clip">,
): Pick<SftOptions, "epochs" | "batchSize" | "adam" | "schedule"> {
  return {
    epochs: stage.epochs,
    batchSize: sft.batch_size,
    adam: adamOptions(actor, stage.lr),
    ...(stage.lr_schedule === "cosine" ? { schedule: (batch: number, total: number) => cosineSchedule(stage.lr, batch, total, sft.warmup_ratio) } : {}),
  };
}

/** Grounding's caps on real calls. */
export function groundingLimits(grounding: Pick<GroundingConfig, "max_calls">): BudgetLimits {
  return { perStep: grounding.max_calls.per_step, perRun: grounding.max_calls.per_run };
}

type TinkerSection = Extract<BackendConfig, { type: "tinker" }>;

/** The connection to a Tinker server; the API key is read from `env` under the section's `api_key_env`. */
export function tinkerConnectOptions(section: TinkerSection, env: Readonly<Record<string, string | undefined>>): TinkerConnectOptions {
  const apiKey = env[section.api_key_env];
  return {
    baseUrl: section.base_url,
    retry: { submitDeadlineMs: section.retry_deadline_s * 1_000 },
    ...(apiKey ? { apiKey } : {}),
  };
}

/** The model trained on a Tinker server (its reduction is settled apart, by measurement). */
export function tinkerModelOptions(section: TinkerSection, seed: number): Pick<TrainingClientOptions, "baseModel" | "loraRank" | "seed" | "lossStrategy"> {
  return { baseModel: section.base_model, loraRank: section.lora_rank, seed, lossStrategy: section.loss_strategy };
}
