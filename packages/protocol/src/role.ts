import { z } from "zod";

/**
 * Who produced a piece of text.
 *
 * - `act`: the policy deciding the next assistant turn (tool calls or a reply).
 * - `rehearse`: the same policy predicting the environment's response to one of its own calls.
 * - `env`: a real environment (never a model output of ours).
 * - `user`: a user, replayed from a reference dialogue or simulated.
 * - `judge`: a model scoring a trajectory.
 * - `reflect`: the policy assessing one of its private rehearsal attempts.
 * - `summarize`: the policy condensing its rehearsal attempts into a rehearsal memory.
 */
export const Role = z.enum(["act", "rehearse", "env", "user", "judge", "reflect", "summarize"]);
export type Role = z.infer<typeof Role>;

/** Roles the policy itself plays; only these produce training rows. */
export const PolicyRole = z.enum(["act", "rehearse", "reflect", "summarize"]);
export type PolicyRole = z.infer<typeof PolicyRole>;
