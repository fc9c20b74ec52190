import { EnvaceError } from "@envace/errors";
import { z } from "zod";
import { Checklist } from "./checklist.js";
import { JsonObject, JsonValue } from "./json.js";
import { Message } from "./message.js";
import { ToolCall, ToolSpec } from "./tool.js";

/**
 * One task an agent is asked to do.
 *
 * `messages` is the starting context (system prompt and first user message). `reference`,
 * when present, is a whole reference dialogue whose later user turns are replayed (CM2 style).
 */
export const Task = z.object({
  id: z.string().min(1),
  messages: z.array(Message).min(1),
  tools: z.array(ToolSpec),
  reference: z.array(Message).optional(),
  /** `checklists[checklist][turn][item]`, one turn per reference user turn. */
  checklists: z.array(Checklist).optional(),
  /** The actions of a correct solution, in order, for action-match rewards and oracles. */
  goldActions: z.array(ToolCall).optional(),
  /** The environment state a correct solution reaches, for state-match rewards. */
  expectedState: JsonValue.optional(),
  metadata: JsonObject.default({}),
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;

/**
 * One training record in the CM2 checklist format: a reference dialogue, its tools and its
 * checklists. `tool_calls` arguments are JSON strings, as in OpenAI chat data.
 */
export const Cm2Record = z.object({
  uuid: z.string().min(1),
  messages: z.array(Message).min(1),
  tools: z.array(ToolSpec),
  checklists: z.array(Checklist),
});
export type Cm2Record = z.infer<typeof Cm2Record>;

/**
 * A task lacks a part the call needs: its reference dialogue, checklists, expected state, gold
 * actions or facts to communicate. The task came from a data set, so the fix is in the data.
 */
export class TaskContentError extends EnvaceError {
  override readonly code = "task-content";
}
