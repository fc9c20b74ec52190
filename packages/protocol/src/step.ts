import { z } from "zod";
import { Generation } from "./generation.js";
import { AssistantMessage, UserMessage } from "./message.js";
import { ToolCall, ToolResult } from "./tool.js";

/**
 * The answer to one tool call together with where it came from. The provenance is part of the
 * type: a `rehearsed` result is the policy's prediction and can never pass for a `grounded`
 * one, which came from a real environment.
 */
export const ToolOutcome = z.discriminatedUnion("provenance", [
  z.object({
    provenance: z.literal("grounded"),
    call: ToolCall,
    result: ToolResult,
  }),
  z.object({
    provenance: z.literal("rehearsed"),
    call: ToolCall,
    result: ToolResult,
    /**
     * The Rehearse generation that produced the result. Absent when the call was rejected
     * before the policy was asked (unknown tool, arguments that violate the schema).
     */
    generation: Generation.optional(),
  }),
]);
export type ToolOutcome = z.infer<typeof ToolOutcome>;
export type Provenance = ToolOutcome["provenance"];

/** An Act generation, the assistant message parsed from it, and the outcome of each tool call. */
export const ActStep = z.object({
  type: z.literal("act"),
  generation: Generation,
  message: AssistantMessage,
  outcomes: z.array(ToolOutcome),
});
export type ActStep = z.infer<typeof ActStep>;

/**
 * One round of a simulated user acting on their own side (dual control, e.g. τ²-Bench telecom:
 * the customer toggles airplane mode on their phone): the user simulator's generation and the
 * outcome of each tool call it made there. These run on the user's side, never the agent's, and
 * the agent sees them only through what the user then says.
 */
export const UserAction = z.object({
  generation: Generation.optional(),
  outcomes: z.array(ToolOutcome),
});
export type UserAction = z.infer<typeof UserAction>;

/** A user turn: replayed from a reference dialogue, or produced by a user simulator. */
export const UserStep = z.object({
  type: z.literal("user"),
  source: z.enum(["replay", "simulator"]),
  message: UserMessage,
  generation: Generation.optional(),
  /** The user's own tool calls before `message`, in order (dual control); absent when there were none. */
  actions: z.array(UserAction).optional(),
});
export type UserStep = z.infer<typeof UserStep>;

export const Step = z.discriminatedUnion("type", [ActStep, UserStep]);
export type Step = z.infer<typeof Step>;
