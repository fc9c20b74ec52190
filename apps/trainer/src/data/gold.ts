import { executionResultText, toolCallText as toolCallBlock } from "@envace/bench-builtin";
import type { AssistantMessage, JsonValue, Message, Task, ToolCall, ToolResult } from "@envace/protocol";
import { DEFAULT_PREDICTED_ERROR_CODE, parseActOutput } from "@envace/trajectory";
import type { DialogueExample } from "../sft.js";

/** One thing wrong with a record, by field path (`messages[3].tool_calls[0].function.arguments`). */
export interface FieldProblem {
  path: string;
  message: string;
}

/** The gold SFT examples of a reference dialogue, or what keeps a turn from being one. */
export interface ReferenceGold {
  examples: DialogueExample[];
  problems: FieldProblem[];
}

// The Act and Rehearse output formats: one definition for every domain.
export { executionResultText, toolCallBlock };

/**
 * The text of an assistant turn as the Act parser reads it: `<think>` reasoning (when the message
 * carries it separately in `reasoning_content`), the content as written, then one `<tool_call>`
 * block per call, on separate lines.
 */
export function actText(message: AssistantMessage, calls: readonly Pick<ToolCall, "name" | "arguments">[]): string {
  const content = message.content ?? "";
  const parts: string[] = [];
  const reasoning = message.reasoning_content?.trim() ?? "";
  if (reasoning !== "" && !content.trimStart().startsWith("<think>")) parts.push(`<think>${reasoning}</think>`);
  if (content.trim() !== "") parts.push(content);
  for (const call of calls) parts.push(toolCallBlock(call));
  return parts.join("\n");
}

/**
 * A real tool message's content as a `ToolResult`. JSON objects and arrays are the result; an
 * object whose only key is `error` holding `{code, message}` (or a bare message string, code
 * `EXECUTION_ERROR`) is a tool error, as the Rehearse parser reads it. Anything the Rehearse role
 * could not write verbatim (plain text, a JSON scalar, a malformed error envelope) is wrapped as
 * `{"result": …}`, so the target text always parses back to this result.
 */
export function toolResultOf(call: ToolCall, content: string): ToolResult {
  const ids = { callId: call.id, name: call.name };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { status: "ok", ...ids, content: { result: content } };
  }
  if (isObject(value) && Object.keys(value).length === 1 && Object.hasOwn(value, "error")) {
    const error = value.error;
    if (typeof error === "string") return { status: "error", ...ids, error: { code: DEFAULT_PREDICTED_ERROR_CODE, message: error } };
    if (isObject(error) && typeof error.code === "string" && error.code !== "" && typeof error.message === "string") {
      return { status: "error", ...ids, error: { code: error.code, message: error.message } };
    }
    return { status: "ok", ...ids, content: { result: value as JsonValue } };
  }
  if (isObject(value) || Array.isArray(value)) return { status: "ok", ...ids, content: value as JsonValue };
  return { status: "ok", ...ids, content: { result: value as JsonValue } };
}

/**
 * The gold examples of a task's reference dialogue, for warm-start SFT of both roles, in order:
 * per assistant turn after the first user message, an `act` example (the dialogue before it, the
 * message, its text) followed by a `rehearse` example per tool message answering it (the same
 * history, the calling turn, the decoded call, the real result and its `<execution_result>` text).
 *
 * A turn that cannot be a gold target is a problem, by field path: tool-call arguments that are not
 * a JSON object, a call to a tool the task does not offer, a turn the Act parser would read
 * differently from the message (stray `<tool_call>` markup, an empty turn), a call no tool message
 * answers, a tool message that answers no call of the turn before it.
 */
export function referenceGold(task: Task): ReferenceGold {
  const reference = task.reference ?? task.messages;
  const examples: DialogueExample[] = [];
  const problems: FieldProblem[] = [];
  const firstUser = reference.findIndex((m) => m.role === "user");
  let i = firstUser + 1;
  while (i < reference.length) {
    const message = reference[i]!;
    if (message.role === "tool") {
      problems.push({ path: `messages[${i}].tool_call_id`, message: `a tool message (call "${message.tool_call_id}") that follows no assistant tool call` });
      i++;
      continue;
    }
    if (message.role !== "assistant") {
      i++;
      continue;
    }
    const history: Message[] = reference.slice(0, i);
    const calls = decodeCalls(message, i, task, problems);
    const text = actText(message, [...calls.values()]);
    checkActReading(text, message, [...calls.values()], i, task, problems);
    examples.push({ role: "act", history, target: message, text });

    const answered = new Set<string>();
    let j = i + 1;
    for (; j < reference.length; j++) {
      const tool = reference[j]!;
      if (tool.role !== "tool") break;
      const call = calls.get(tool.tool_call_id);
      if (call === undefined) {
        // An undecodable call is already a problem; only an unknown id is a new one.
        if (!(message.tool_calls ?? []).some((wire) => wire.id === tool.tool_call_id)) {
          problems.push({ path: `messages[${j}].tool_call_id`, message: `"${tool.tool_call_id}" answers no call of the assistant turn at messages[${i}]` });
        }
        continue;
      }
      if (answered.has(call.id)) {
        problems.push({ path: `messages[${j}].tool_call_id`, message: `call "${call.id}" is answered twice` });
        continue;
      }
      answered.add(call.id);
      const result = toolResultOf(call, tool.content);
      examples.push({ role: "rehearse", history, latestAct: message, call, result, text: executionResultText(result) });
    }
    (message.tool_calls ?? []).forEach((wire, k) => {
      if (calls.has(wire.id) && !answered.has(wire.id)) {
        problems.push({ path: `messages[${i}].tool_calls[${k}]`, message: `call "${wire.id}" gets no tool message` });
      }
    });
    i = j;
  }
  return { examples, problems };
}

/** The decoded calls of a turn by id, recording a problem for each call that cannot be one. */
function decodeCalls(message: AssistantMessage, at: number, task: Task, problems: FieldProblem[]): Map<string, ToolCall> {
  const tools = new Set(task.tools.map((tool) => tool.function.name));
  const calls = new Map<string, ToolCall>();
  (message.tool_calls ?? []).forEach((wire, k) => {
    const where = `messages[${at}].tool_calls[${k}]`;
    if (calls.has(wire.id)) {
      problems.push({ path: `${where}.id`, message: `duplicate call id "${wire.id}"` });
      return;
    }
    if (!tools.has(wire.function.name)) {
      const offered = [...tools].join(", ") || "none";
      problems.push({ path: `${where}.function.name`, message: `"${wire.function.name}" is not one of the record's tools (${offered})` });
      return;
    }
    let args: unknown;
    try {
      args = JSON.parse(wire.function.arguments);
    } catch (error) {
      problems.push({ path: `${where}.function.arguments`, message: `not JSON (${(error as Error).message})` });
      return;
    }
    if (!isObject(args)) {
      problems.push({ path: `${where}.function.arguments`, message: `a JSON ${jsonType(args)}, expected an object` });
      return;
    }
    calls.set(wire.id, { id: wire.id, name: wire.function.name, arguments: args as ToolCall["arguments"] });
  });
  return calls;
}

/** The Act parser must read the gold text as exactly this turn: the same calls, or a reply. */
function checkActReading(text: string, message: AssistantMessage, calls: readonly ToolCall[], at: number, task: Task, problems: FieldProblem[]): void {
  if (calls.length !== (message.tool_calls ?? []).length) return; // already a problem
  const parsed = parseActOutput({ text }, { tools: task.tools, formats: ["hermes"] });
  const where = `messages[${at}]`;
  if (parsed.kind === "error") {
    problems.push({ path: where, message: `the Act parser cannot read this turn: ${parsed.code} (${parsed.detail})` });
    return;
  }
  const read = parsed.kind === "tool_calls" ? parsed.calls.map((c) => JSON.stringify([c.name, c.arguments])) : [];
  const meant = calls.map((c) => JSON.stringify([c.name, c.arguments]));
  if (read.length !== meant.length || read.some((r, k) => r !== meant[k])) {
    const what = calls.length === 0 ? "a reply" : `${calls.length} tool call(s)`;
    problems.push({
      path: `${where}.content`,
      message: `the Act parser reads ${read.length} tool call(s) where the message has ${what}: <tool_call> markup in the content must be given as tool_calls`,
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}
