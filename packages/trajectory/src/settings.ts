import { z } from "zod";
import type { SamplingParamsInput } from "@envace/protocol";

/** The limits of one rollout. Defaults follow the EnvACE paper's training setup. */
export const UnfoldLimits = z.object({
  /** Act generations per rollout. */
  maxTurns: z.number().int().positive().default(30),
  /** Output tokens per generation, any role (clips `SamplingParams.maxTokens`). */
  maxResponseTokens: z.number().int().positive().default(8192),
  /** Prompt tokens per generation: the context length a rollout may grow to. */
  maxPromptTokens: z.number().int().positive().default(12288),
  /** End the rollout after this many tool errors (refused, failed or predicted to fail). Default: never. */
  maxToolErrors: z.number().int().positive().optional(),
});
export type UnfoldLimits = z.infer<typeof UnfoldLimits>;
export type UnfoldLimitsInput = z.input<typeof UnfoldLimits>;

/** Sampling for each role of a rollout. */
export interface RoleSampling {
  act: SamplingParamsInput;
  rehearse: SamplingParamsInput;
  user: SamplingParamsInput;
}

/**
 * Sampling presets. `training`: temperature 1 and no top-p/top-k in every role, so the sampler's
 * distribution is the learner's. `evaluation`: acting at temperature 0.6, top-p 0.95; rehearsal
 * (test-time) at temperature 1. The simulated user's sampling is this project's default.
 */
export const SAMPLING_PRESETS = {
  training: {
    act: { temperature: 1, topP: 1, topK: 0 },
    rehearse: { temperature: 1, topP: 1, topK: 0 },
    user: { temperature: 1, topP: 1, topK: 0 },
  },
  evaluation: {
    act: { temperature: 0.6, topP: 0.95 },
    rehearse: { temperature: 1, topP: 1 },
    user: { temperature: 0.6, topP: 0.95 },
  },
} as const satisfies Record<string, RoleSampling>;
