import { z } from "zod";

/**
 * How to sample one generation. Training rollouts use temperature 1 and no top-p/top-k, so the
 * sampler's distribution is the learner's; evaluation and the private-rehearsal roles differ.
 */
export const SamplingParams = z.object({
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  topK: z.number().int().min(0).default(0),
  maxTokens: z.number().int().positive().default(8192),
  stop: z.array(z.string()).default([]),
  seed: z.number().int().optional(),
});
export type SamplingParams = z.infer<typeof SamplingParams>;
export type SamplingParamsInput = z.input<typeof SamplingParams>;
