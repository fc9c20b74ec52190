import { z } from "zod";
import { JsonObject, JsonValue } from "./json.js";

/** A tool as an OpenAI function tool: name, description and JSON-Schema parameters. */
export const ToolSpec = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: JsonObject.optional(),
    strict: z.boolean().optional(),
  }),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

/** One parsed tool call. `arguments` is already decoded JSON, never a string. */
export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: JsonObject,
});
export type ToolCall = z.infer<typeof ToolCall>;

/**
 * A typed failure of a tool call. `code` is machine-readable (`TOOL_NOT_AVAILABLE`,
 * `INVALID_PARAMETERS`, a domain code such as `INSUFFICIENT_FUNDS`); `message` is what the agent reads.
 */
export const ToolError = z.object({
  code: z.string().min(1),
  message: z.string(),
});
export type ToolError = z.infer<typeof ToolError>;

/** The answer to one tool call: JSON content, or a typed error. */
export const ToolResult = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("ok"),
    callId: z.string().min(1),
    name: z.string().min(1),
    content: JsonValue,
  }),
  z.object({
    status: z.literal("error"),
    callId: z.string().min(1),
    name: z.string().min(1),
    error: ToolError,
  }),
]);
export type ToolResult = z.infer<typeof ToolResult>;

/** The name of a tool spec, for whitelists and lookups. */
export function toolName(spec: ToolSpec): string {
  return spec.function.name;
}
