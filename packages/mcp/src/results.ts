import type { JsonObject, JsonValue, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { nestsDeeperThan } from "./listing.js";

/** The codes of the typed tool errors an MCP environment answers with; a rollout reads them, it never catches them. */
export const McpToolErrorCode = {
  /** The tool is not listed by the server or not on the task's allow-list; the server is not asked. */
  notAvailable: "TOOL_NOT_AVAILABLE",
  /** The server ran the tool and reported a failure (`isError: true`). */
  toolError: "MCP_TOOL_ERROR",
  /** The server answered the request with a JSON-RPC error (unknown tool, invalid arguments, …). */
  protocolError: "MCP_PROTOCOL_ERROR",
  /** No answer within the per-call timeout; the request is cancelled. */
  timeout: "MCP_TIMEOUT",
  /** The server process exited or the connection closed; every later call of the episode gets this too. */
  serverExited: "MCP_SERVER_EXITED",
  /** The answer is not a valid tool result (or its structured content breaks the tool's output schema). */
  malformedResult: "MCP_MALFORMED_RESULT",
} as const;
export type McpToolErrorCode = (typeof McpToolErrorCode)[keyof typeof McpToolErrorCode];

/** An MCP tool as an OpenAI function tool: MCP's `inputSchema` already is JSON Schema. */
export function toolSpecOf(tool: Tool): ToolSpec {
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.inputSchema as JsonObject,
    },
  };
}

/**
 * The content of a tool result: its structured content when it has one; else the text of a single
 * text block as it is (most servers answer JSON as text, and the agent reads it verbatim); else
 * the blocks, text blocks as their text.
 */
export function contentOf(result: CallToolResult): JsonValue {
  if (result.structuredContent !== undefined) return result.structuredContent as JsonObject;
  const blocks = result.content;
  if (blocks.length === 1 && blocks[0]!.type === "text") return blocks[0]!.text;
  return blocks.map((block) => (block.type === "text" ? block.text : (block as unknown as JsonObject)));
}

/** What a failed tool's result says, as one string for the error message. */
function failureText(result: CallToolResult): string {
  const content = contentOf(result);
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((c) => typeof c === "string")) return content.join("\n");
  return JSON.stringify(content);
}

/** The tool result of an MCP `tools/call` answer: `isError` becomes a typed error. */
/** The deepest nesting of objects and arrays a tool result may have; deeper is `MCP_MALFORMED_RESULT`. */
export const RESULT_DEPTH_LIMIT = 100;

export function resultOf(call: ToolCall, result: CallToolResult): ToolResult {
  const base = { callId: call.id, name: call.name };
  // Checked before anything walks it: a deeper value would overflow the stack of whatever recurses.
  if (nestsDeeperThan(result.structuredContent, RESULT_DEPTH_LIMIT) || nestsDeeperThan(result.content, RESULT_DEPTH_LIMIT + 1)) {
    return {
      ...base,
      status: "error",
      error: { code: McpToolErrorCode.malformedResult, message: `the MCP server's result nests deeper than ${RESULT_DEPTH_LIMIT} levels` },
    };
  }
  if (result.isError === true) return { ...base, status: "error", error: { code: McpToolErrorCode.toolError, message: failureText(result) } };
  return { ...base, status: "ok", content: contentOf(result) };
}

// The SDK's own checks of a result against the tool's output schema raise McpErrors worded so.
const OUTPUT_SCHEMA = /output schema|structured content/i;

/** The typed error of a call that threw: the SDK's errors mapped to `McpToolErrorCode`s. */
export function errorResultOf(call: ToolCall, error: unknown, context: { timeoutMs: number; exited?: string | undefined }): ToolResult {
  const base = { callId: call.id, name: call.name, status: "error" as const };
  const fail = (code: McpToolErrorCode, message: string): ToolResult => ({ ...base, error: { code, message } });
  if (context.exited !== undefined) return fail(McpToolErrorCode.serverExited, context.exited);
  if (error instanceof McpError) {
    if (error.code === (ErrorCode.RequestTimeout as number))
      return fail(McpToolErrorCode.timeout, `no answer from the MCP server within ${context.timeoutMs} ms`);
    if (error.code === (ErrorCode.ConnectionClosed as number)) return fail(McpToolErrorCode.serverExited, "the MCP server closed the connection");
    if (OUTPUT_SCHEMA.test(error.message)) return fail(McpToolErrorCode.malformedResult, error.message);
    return fail(McpToolErrorCode.protocolError, error.message);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/not connected/i.test(message)) return fail(McpToolErrorCode.serverExited, "the MCP server is not connected");
  // Anything else the client raised is its check of the answer's shape (a zod error).
  return fail(McpToolErrorCode.malformedResult, `the MCP server's answer is not a tool result: ${oneLine(message)}`);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}
