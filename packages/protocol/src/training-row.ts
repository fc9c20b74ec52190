import { z } from "zod";
import { PolicyRole } from "./role.js";

/**
 * One generation of the policy as a training example. Rows inherit their rollout's reward;
 * role-wise GRPO groups them by task and by role.
 */
export const TrainingRow = z.object({
  taskId: z.string().min(1),
  trajectoryId: z.string().min(1),
  /** Index of the rollout within its task's group. */
  rollout: z.number().int().nonnegative(),
  /** Position of this generation within its trajectory (0 = first generation). */
  index: z.number().int().nonnegative(),
  role: PolicyRole,
  promptTokens: z.array(z.number().int().nonnegative()),
  outputTokens: z.array(z.number().int().nonnegative()),
  /** Sampler log-probability of each output token; null when the backend could not return them. */
  logprobs: z.array(z.number()).nullable(),
  /** The output could not be parsed (empty, malformed); the invalid-output penalty applies. */
  invalid: z.boolean(),
});
export type TrainingRow = z.infer<typeof TrainingRow>;
