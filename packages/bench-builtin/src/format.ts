import type { JsonValue, ToolCall, ToolResult } from "@envace/protocol";

/**
 * The text forms of tool traffic. Act outputs call tools in Qwen/Hermes `<tool_call>` blocks;
 * Rehearse outputs (and SFT targets for that role) wrap the environment's answer in
 * `<execution_result>`. A tool error is carried as `{"error":{"code":…,"message":…}}` in both the
 * tool message and the execution result, so the two roles see one shape.
 */
export function toolCallText(call: Pick<ToolCall, "name" | "arguments">): string {
  return `<tool_call>${JSON.stringify({ name: call.name, arguments: call.arguments })}</tool_call>`;
}

/** The JSON an environment answer carries: the result content, or `{error: {code, message}}`. */
export function toolContent(result: ToolResult): JsonValue {
  return result.status === "ok" ? result.content : { error: { code: result.error.code, message: result.error.message } };
}

/** The `content` of the OpenAI `tool` message that answers a call. */
export function toolMessageText(result: ToolResult): string {
  return JSON.stringify(toolContent(result));
}

/** What the Rehearse role should output for a call whose real answer is `result`. */
export function executionResultText(result: ToolResult): string {
  return `<execution_result>${toolMessageText(result)}</execution_result>`;
}
