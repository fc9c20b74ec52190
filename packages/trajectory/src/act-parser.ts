import { toolName, type ActParseErrorCode, type AssistantMessage, type ToolCall, type ToolSpec, type WireToolCall } from "@envace/protocol";
import { excerpt, findNonFinite, isJsonObject, jsonTypeName, tryParseJson, tryStringify } from "./json-value.js";
import { splitReasoning, THINK_TAGS, type ReasoningTags } from "./reasoning.js";

/**
 * Where an Act output's tool calls may come from:
 * - `openai`: native `tool_calls` parsed by an OpenAI-compatible server (`Generation.toolCalls`);
 * - `hermes`: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks in the text, as Qwen3
 *   and other Hermes-style chat templates ask for. One block may also hold a JSON list of calls.
 */
export type ActFormat = "openai" | "hermes";

export interface ActParserOptions {
  /** The tools of the task. A call to any other name fails with `INVALID_TOOL_NAME`. */
  tools: readonly ToolSpec[] | readonly string[];
  /** Accepted formats. Native calls, when present and accepted, win over text. Default both. */
  formats?: readonly ActFormat[];
  /** Reasoning tags to strip from the start of the output, or `false`. Default `<think>`. */
  reasoningTags?: ReasoningTags | false;
  /** Tags around a text tool call. Default `<tool_call>`, `</tool_call>`. */
  toolCallTags?: { open: string; close: string };
  /** Keys a text tool call may hold its arguments under, in order of preference. Default `["arguments"]`. */
  argumentKeys?: readonly string[];
  /** Ids for calls parsed from text (native calls keep theirs). Default `call_<index>`. */
  callId?: (index: number) => string;
}

/** What an Act output means, never an exception. */
export type ActOutput =
  /** One or more tool calls, in order. `content` is any visible text around them. */
  | { kind: "tool_calls"; calls: ToolCall[]; content: string; reasoning: string | undefined; message: AssistantMessage }
  /** A reply to the user with no tool call: the agent ends its turn. */
  | { kind: "reply"; content: string; reasoning: string | undefined; message: AssistantMessage }
  /** Malformed output: the rollout ends with `parse_error` and this code. */
  | { kind: "error"; code: ActParseErrorCode; detail: string; content: string; reasoning: string | undefined };

/** The parts of a generation the Act parser reads (a `Generation` fits). */
export interface ActInput {
  text: string;
  reasoning?: string | undefined;
  toolCalls?: readonly WireToolCall[] | undefined;
}

const TOOL_CALL_TAGS = { open: "<tool_call>", close: "</tool_call>" };
const ALL_FORMATS: readonly ActFormat[] = ["openai", "hermes"];

interface Failure {
  code: ActParseErrorCode;
  detail: string;
}

/**
 * Parse an Act output into tool calls, a reply, or a typed failure.
 *
 * Failure codes, checked per call in this order:
 * - `NO_TOOL_CALL_FOUND`: tool-call markup is present but holds no call (an empty block, a block
 *   whose JSON is not an object or a list of objects, an empty list, a closing tag with no opening
 *   tag), or the output has nothing to act on at all (empty after its reasoning, including a
 *   reasoning block that never closed). Plain text without markup is a reply, not a failure.
 * - `JSON_DECODE_ERROR`: a block, or a call's arguments string, is not valid JSON. A block left
 *   open at the end of the output is read to the end, as inference servers do.
 * - `INVALID_TOOL_NAME`: the call has no name, or names a tool the task does not offer.
 * - `NO_ARGUMENTS`: the call has no arguments (missing, `null`, or an empty string).
 * - `NON_SERIALIZABLE_ARGUMENTS`: the arguments are JSON but not a JSON object (a list, a number,
 *   a string that does not hold an object), or hold a number JSON cannot carry (`1e999`).
 * The first failing call decides the code; a partly valid output is still a failure.
 */
export function parseActOutput(output: ActInput, options: ActParserOptions): ActOutput {
  const formats = options.formats ?? ALL_FORMATS;
  const split = splitReasoning(output.text, options.reasoningTags ?? THINK_TAGS);
  const reasoning = output.reasoning ?? split.reasoning;
  const allowed = options.tools.map((tool) => (typeof tool === "string" ? tool : toolName(tool)));

  if (formats.includes("openai") && output.toolCalls !== undefined && output.toolCalls.length > 0) {
    const calls: ToolCall[] = [];
    for (const [index, wire] of output.toolCalls.entries()) {
      const decoded = decodeCall(wire.function.name, wire.function.arguments, allowed, `tool_calls[${index}]`);
      if ("code" in decoded) return failure(decoded, split.content, reasoning);
      calls.push({ id: wire.id, ...decoded });
    }
    // The server's own wire form (ids, argument strings) goes into the history unchanged.
    const message = assistant(split.content, reasoning, []);
    message.tool_calls = output.toolCalls.map((call) => ({ ...call, function: { ...call.function } }));
    return { kind: "tool_calls", calls, content: split.content, reasoning, message };
  }

  if (!split.closed) {
    return failure({ code: "NO_TOOL_CALL_FOUND", detail: "the reasoning block never closed: no reply and no tool call" }, "", reasoning);
  }

  const tags = options.toolCallTags ?? TOOL_CALL_TAGS;
  const { blocks, visible } = formats.includes("hermes") ? extractBlocks(split.content, tags) : { blocks: [], visible: split.content };
  if (blocks.length === 0) {
    if (formats.includes("hermes") && visible.includes(tags.close)) {
      return failure({ code: "NO_TOOL_CALL_FOUND", detail: `${tags.close} without ${tags.open}` }, visible, reasoning);
    }
    if (visible.length === 0) {
      return failure({ code: "NO_TOOL_CALL_FOUND", detail: "empty output: no reply and no tool call" }, visible, reasoning);
    }
    return {
      kind: "reply",
      content: visible,
      reasoning,
      message: assistant(visible, reasoning, []),
    };
  }

  const keys = options.argumentKeys ?? ["arguments"];
  const callId = options.callId ?? ((index: number) => `call_${index}`);
  const calls: ToolCall[] = [];
  for (const [blockIndex, block] of blocks.entries()) {
    const where = `${tags.open} block ${blockIndex + 1}`;
    const body = block.trim();
    if (body.length === 0) return failure({ code: "NO_TOOL_CALL_FOUND", detail: `${where} is empty` }, visible, reasoning);
    const parsed = tryParseJson(body);
    if (!parsed.ok) {
      return failure({ code: "JSON_DECODE_ERROR", detail: `${where}: ${parsed.error} in ${excerpt(body)}` }, visible, reasoning);
    }
    const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    if (items.length === 0) return failure({ code: "NO_TOOL_CALL_FOUND", detail: `${where} holds an empty list` }, visible, reasoning);
    for (const [itemIndex, item] of items.entries()) {
      const at = Array.isArray(parsed.value) ? `${where}, item ${itemIndex + 1}` : where;
      if (!isJsonObject(item)) {
        return failure({ code: "NO_TOOL_CALL_FOUND", detail: `${at} holds a JSON ${jsonTypeName(item)}, not a call object` }, visible, reasoning);
      }
      const key = keys.find((k) => Object.hasOwn(item, k));
      const decoded = decodeCall(item.name, key === undefined ? undefined : item[key], allowed, at);
      if ("code" in decoded) return failure(decoded, visible, reasoning);
      calls.push({ id: callId(calls.length), ...decoded });
    }
  }
  return { kind: "tool_calls", calls, content: visible, reasoning, message: assistant(visible, reasoning, calls) };
}

function decodeCall(
  name: unknown,
  rawArguments: unknown,
  allowed: readonly string[],
  where: string,
): { name: string; arguments: ToolCall["arguments"] } | Failure {
  if (typeof name !== "string" || name.length === 0) {
    return { code: "INVALID_TOOL_NAME", detail: `${where}: the call has no tool name` };
  }
  if (!allowed.includes(name)) {
    const offered = allowed.length > 0 ? allowed.join(", ") : "none";
    return { code: "INVALID_TOOL_NAME", detail: `${where}: unknown tool "${excerpt(name, 60)}" (available: ${offered})` };
  }
  let value = rawArguments;
  if (value === undefined || value === null || (typeof value === "string" && value.trim().length === 0)) {
    return { code: "NO_ARGUMENTS", detail: `${where}: call to "${name}" has no arguments` };
  }
  if (typeof value === "string") {
    const parsed = tryParseJson(value);
    if (!parsed.ok) {
      return { code: "JSON_DECODE_ERROR", detail: `${where}: arguments of "${name}": ${parsed.error} in ${excerpt(value)}` };
    }
    value = parsed.value;
  }
  if (!isJsonObject(value)) {
    return {
      code: "NON_SERIALIZABLE_ARGUMENTS",
      detail: `${where}: arguments of "${name}" are a JSON ${jsonTypeName(value)}, not an object`,
    };
  }
  const bad = findNonFinite(value);
  if (bad !== undefined || tryStringify(value) === undefined) {
    const why = bad === undefined ? "nest too deeply to serialise" : `hold ${String(bad)}, which JSON cannot carry`;
    return { code: "NON_SERIALIZABLE_ARGUMENTS", detail: `${where}: arguments of "${name}" ${why}` };
  }
  return { name, arguments: value };
}

/** Split text into tool-call block bodies and the visible text around them. */
function extractBlocks(text: string, tags: { open: string; close: string }): { blocks: string[]; visible: string } {
  const blocks: string[] = [];
  const outside: string[] = [];
  let position = 0;
  for (;;) {
    const open = text.indexOf(tags.open, position);
    if (open < 0) break;
    outside.push(text.slice(position, open));
    const bodyStart = open + tags.open.length;
    const close = text.indexOf(tags.close, bodyStart);
    if (close < 0) {
      blocks.push(text.slice(bodyStart));
      position = text.length;
      break;
    }
    blocks.push(text.slice(bodyStart, close));
    position = close + tags.close.length;
  }
  outside.push(text.slice(position));
  return { blocks, visible: outside.join("").trim() };
}

function failure(f: Failure, content: string, reasoning: string | undefined): ActOutput {
  return { kind: "error", code: f.code, detail: f.detail, content, reasoning };
}

function assistant(content: string, reasoning: string | undefined, calls: readonly ToolCall[]): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", content };
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
  }
  return message;
}
