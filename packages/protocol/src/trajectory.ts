import { z } from "zod";
import { JsonObject } from "./json.js";
import { Message } from "./message.js";
import { Step } from "./step.js";

/** The typed failures of parsing an Act output. Any of them ends the episode. */
export const ActParseErrorCode = z.enum(["NO_TOOL_CALL_FOUND", "JSON_DECODE_ERROR", "NO_ARGUMENTS", "INVALID_TOOL_NAME", "NON_SERIALIZABLE_ARGUMENTS"]);
export type ActParseErrorCode = z.infer<typeof ActParseErrorCode>;

/**
 * Why a tool call was refused before any environment saw it, checked in this order: not a call
 * of the right shape, a tool not offered, arguments that violate the tool's schema. The Rehearse
 * validator answers such a call with a `ToolError` of this code; scoring treats the call as invalid.
 */
export const CallRejectionCode = z.enum(["INVALID_TOOL_CALL_FORMAT", "TOOL_NOT_AVAILABLE", "INVALID_PARAMETERS"]);
export type CallRejectionCode = z.infer<typeof CallRejectionCode>;

/** Why a rollout ended. */
export const Termination = z.discriminatedUnion("reason", [
  /** The agent ended its turn and no further user turn followed. */
  z.object({ reason: z.literal("agent_stop") }),
  /** The (simulated) user ended the conversation. */
  z.object({ reason: z.literal("user_stop"), marker: z.string().optional() }),
  z.object({ reason: z.literal("max_turns"), limit: z.number().int() }),
  /** A response, context or total token limit was reached. */
  z.object({ reason: z.literal("max_tokens"), limit: z.number().int(), detail: z.string().optional() }),
  z.object({ reason: z.literal("parse_error"), code: ActParseErrorCode, detail: z.string() }),
  /** Too many tool errors in one rollout. */
  z.object({ reason: z.literal("tool_error"), count: z.number().int() }),
  /** The environment (real or rehearsed) failed to produce a result. */
  z.object({ reason: z.literal("env_error"), code: z.string(), detail: z.string() }),
]);
export type Termination = z.infer<typeof Termination>;
export type TerminationReason = Termination["reason"];

/**
 * The reward of a rollout, or an explicit refusal to score it. A `masked` rollout (for
 * example, the judge could not be reached) is excluded from advantages; it is never a 0.
 */
export const RewardVerdict = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("scored"),
    value: z.number(),
    components: z.record(z.string(), z.number()).optional(),
  }),
  z.object({
    status: z.literal("masked"),
    reason: z.string(),
  }),
]);
export type RewardVerdict = z.infer<typeof RewardVerdict>;

/** One rollout of one task: the starting context, every step, and how it ended. */
export const Trajectory = z.object({
  id: z.string().min(1),
  taskId: z.string().min(1),
  /** Index of this rollout within its task's group of G rollouts. */
  rollout: z.number().int().nonnegative(),
  context: z.array(Message),
  steps: z.array(Step),
  termination: Termination,
  reward: RewardVerdict.optional(),
  metadata: JsonObject.default({}),
});
export type Trajectory = z.infer<typeof Trajectory>;
