import { z } from "zod";
import type { ToolCall } from "./tool.js";

/**
 * Chat messages in the OpenAI shape, so any OpenAI-compatible server or chat template consumes
 * them unchanged. Tool-call arguments are JSON *strings* here, as on the wire; `ToolCall` is
 * the decoded form.
 */
export const WireToolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({
    name: z.string(),
    arguments: z.string(),
  }),
});
export type WireToolCall = z.infer<typeof WireToolCall>;

export const SystemMessage = z.object({
  role: z.literal("system"),
  content: z.string(),
});
export type SystemMessage = z.infer<typeof SystemMessage>;

export const UserMessage = z.object({
  role: z.literal("user"),
  content: z.string(),
});
export type UserMessage = z.infer<typeof UserMessage>;

/**
 * An assistant turn. `content` may hold `<think>…</think>` as many chat datasets do;
 * `reasoning_content` is the separated form some servers return.
 */
export const AssistantMessage = z.object({
  role: z.literal("assistant"),
  content: z.string().nullable(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(WireToolCall).optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const ToolMessage = z.object({
  role: z.literal("tool"),
  tool_call_id: z.string(),
  name: z.string().optional(),
  content: z.string(),
});
export type ToolMessage = z.infer<typeof ToolMessage>;

export const Message = z.discriminatedUnion("role", [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type Message = z.infer<typeof Message>;

/** The wire form of a decoded tool call (arguments re-encoded as a JSON string). */
export function toWireToolCall(call: ToolCall): WireToolCall {
  return { id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
}
