import type { Generation, Message, WireToolCall } from "@envace/protocol";
import { JsonDecodeError, jsonLoads, type PyDict, pyDumps } from "@envace/python-text";
import { splitReasoning } from "@envace/trajectory";
import type { Requestor, Tau2AssistantMessage, Tau2Message, Tau2ToolCall, Tau2UserMessage } from "./task.js";

// How a τ² conversation looks to each participant, and how their generations become τ²
// messages. Upstream keeps one message list; the agent and the user each see part of it.

/** Upstream's `DEFAULT_FIRST_AGENT_MESSAGE`: the agent's greeting that opens every fresh conversation. */
export const FIRST_AGENT_MESSAGE = "Hi! How can I help you today?";

/** The user simulator's stop markers: goal reached, transferred to a human, out of scope. */
export const STOP_MARKERS = ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"] as const;

/** Whether a user message ends the conversation (a text message holding a stop marker). */
export function isUserStop(message: Tau2UserMessage): boolean {
  if (message.tool_calls !== null || message.content === null) return false;
  return STOP_MARKERS.some((marker) => message.content!.includes(marker));
}

/**
 * The agent's instructions around the domain policy. Paraphrased; pass upstream's own text as
 * `instruction` to reproduce its prompt exactly.
 */
export const DEFAULT_AGENT_INSTRUCTION = `You are a customer service agent. Help the user in line with the <policy> below.
On each turn, do exactly one of two things: send the user a message, or call a tool. Never both in the same turn.
Be helpful, follow the policy at all times, and write only valid JSON in tool calls.`;

/** The agent's system prompt: the instructions, then the domain policy (`policy.md`). */
export function agentSystemPrompt(policy: string, instruction: string = DEFAULT_AGENT_INSTRUCTION): string {
  return `<instructions>\n${instruction}\n</instructions>\n<policy>\n${policy}\n</policy>`;
}

/**
 * The user simulator's system prompt: the upstream guidelines (read from the data folder, the
 * variant for users with tools when they have some), then the task's scenario.
 */
export function userSystemPrompt(guidelines: string, scenario: string): string {
  return `${guidelines.replace("<PERSONA_GUIDELINES>", "")}\n\n<scenario>\n${scenario}\n</scenario>`;
}

function wireCalls(calls: readonly Tau2ToolCall[]): WireToolCall[] {
  // Upstream sends arguments as Python's `json.dumps` writes them.
  return calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: pyDumps(call.arguments) } }));
}

/** What the agent sees: every agent message, the user's text messages, the results of its own calls. */
export function agentView(systemPrompt: string, messages: readonly Tau2Message[]): Message[] {
  return sideView(systemPrompt, messages, "assistant");
}

/**
 * What the user simulator sees, with roles swapped as upstream does: its own messages as the
 * assistant's, the agent's text messages as the user's, the results of its own tool calls.
 */
export function userView(systemPrompt: string, messages: readonly Tau2Message[]): Message[] {
  return sideView(systemPrompt, messages, "user");
}

/** The conversation from one side: its own messages as the assistant's, the other side's text as the user's. */
function sideView(systemPrompt: string, messages: readonly Tau2Message[], self: Requestor): Message[] {
  const view: Message[] = [{ role: "system", content: systemPrompt }];
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "tool") {
      if (message.requestor === self) view.push({ role: "tool", tool_call_id: message.id, content: message.content ?? "" });
    } else if (message.role === self) {
      view.push({
        role: "assistant",
        content: message.content,
        ...(message.tool_calls !== null ? { tool_calls: wireCalls(message.tool_calls) } : {}),
      });
    } else if (message.tool_calls === null) {
      view.push({ role: "user", content: message.content ?? "" });
    }
  }
  return view;
}

/** A generation as a τ² message, or why it cannot be one. */
export type ParsedTurn<M> = { ok: true; message: M; reasoning?: string } | { ok: false; detail: string };

/**
 * Read a generation as upstream reads a chat completion: native tool calls (arguments parsed
 * as Python's `json.loads` parses them) and the visible text (a leading `<think>` block is kept
 * apart as reasoning). Without native calls, Hermes-style `<tool_call>{"name": …, "arguments":
 * {…}}</tool_call>` blocks in the text are calls. Calls to unknown tools are not refused here:
 * the environment answers them with upstream's error, as upstream does. A message with neither
 * text nor calls, and arguments that are not a JSON object, are malformed.
 */
export function parseTurn<R extends "assistant" | "user">(
  generation: Generation,
  role: R,
  callId: (index: number) => string,
): ParsedTurn<R extends "assistant" ? Tau2AssistantMessage : Tau2UserMessage> {
  const split = splitReasoning(generation.text);
  const reasoning = generation.reasoning ?? split.reasoning;
  let text = split.content;
  let wires = generation.toolCalls ?? [];
  if (wires.length === 0 && text.includes(TOOL_CALL_OPEN)) {
    const hermes = hermesCalls(text);
    if (!hermes.ok) return hermes;
    wires = hermes.calls;
    text = hermes.visible;
  }
  const content = text.length > 0 ? text : null;
  const requestor: Requestor = role;
  const calls: Tau2ToolCall[] = [];
  const seen = new Set<string>();
  for (const [index, wire] of wires.entries()) {
    let args: unknown;
    try {
      args = jsonLoads(wire.function.arguments);
    } catch (error) {
      const why = error instanceof JsonDecodeError ? error.message : String(error);
      return { ok: false, detail: `tool call ${index} (${wire.function.name}): arguments are not JSON (${why})` };
    }
    if (!(args instanceof Map)) return { ok: false, detail: `tool call ${index} (${wire.function.name}): arguments are not a JSON object` };
    // Ids must pair calls with results; invent one where the server gave none or repeated one.
    const id = wire.id && !seen.has(wire.id) ? wire.id : callId(index);
    seen.add(id);
    calls.push({ id, name: wire.function.name, arguments: args as PyDict, requestor });
  }
  if (content === null && calls.length === 0) {
    return { ok: false, detail: split.closed ? "empty message: no text and no tool call" : "the reasoning never closed: no text and no tool call" };
  }
  const message = { role, content, tool_calls: calls.length > 0 ? calls : null } as R extends "assistant" ? Tau2AssistantMessage : Tau2UserMessage;
  return { ok: true, message, ...(reasoning === undefined ? {} : { reasoning }) };
}

const TOOL_CALL_OPEN = "<tool_call>";
const TOOL_CALL_CLOSE = "</tool_call>";

/** `<tool_call>` blocks as wire calls (arguments re-encoded), and the text around them. */
function hermesCalls(text: string): { ok: true; calls: WireToolCall[]; visible: string } | { ok: false; detail: string } {
  const calls: WireToolCall[] = [];
  const outside: string[] = [];
  let position = 0;
  for (;;) {
    const open = text.indexOf(TOOL_CALL_OPEN, position);
    if (open < 0) break;
    outside.push(text.slice(position, open));
    const start = open + TOOL_CALL_OPEN.length;
    const close = text.indexOf(TOOL_CALL_CLOSE, start);
    const body = text.slice(start, close < 0 ? text.length : close).trim();
    position = close < 0 ? text.length : close + TOOL_CALL_CLOSE.length;
    let block: unknown;
    try {
      block = jsonLoads(body);
    } catch (error) {
      return { ok: false, detail: `<tool_call> block ${calls.length + 1} is not JSON (${(error as Error).message})` };
    }
    const fields = block instanceof Map ? (block as PyDict) : undefined;
    const name = fields?.get("name");
    const args = fields?.get("arguments");
    if (typeof name !== "string" || args === undefined) {
      return { ok: false, detail: `<tool_call> block ${calls.length + 1} is not {"name": …, "arguments": {…}}` };
    }
    const encoded = typeof args === "string" ? args : pyDumps(args);
    calls.push({ id: "", type: "function", function: { name, arguments: encoded } });
  }
  outside.push(text.slice(position));
  return { ok: true, calls, visible: outside.join("").trim() };
}
