import type { AssistantMessage, WireToolCall } from "@envace/protocol";

/** A tool call as the judge sees it: the name and the arguments exactly as sent (a JSON string). */
export interface VisibleToolCall {
  name: string;
  arguments: string;
}

/**
 * An assistant message split into what the judge must tell apart: private thinking, the reply the
 * user sees, and the tool calls that were really made.
 */
export interface AssistantParts {
  thinking: string;
  reply: string;
  toolCalls: VisibleToolCall[];
}

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";

/**
 * Split an assistant message. Thinking is `reasoning_content` plus any `<think>…</think>` in the
 * content (a lone `</think>` closes thinking opened by the chat template; a lone `<think>` runs to
 * the end). Tool calls are the native `tool_calls`, or else the `<tool_call>` blocks of the
 * visible reply. A `<tool_call>` block inside the thinking is not a call and stays thinking text.
 */
export function splitAssistant(message: AssistantMessage): AssistantParts {
  const { thinking, visible } = splitThinking(message.content ?? "");
  const reasoning = joinParts(message.reasoning_content ?? "", thinking);
  const inlineCalls: VisibleToolCall[] = [];
  const reply = withoutBlocks(visible, (body) => inlineCalls.push(parseInlineCall(body)));
  const native = message.tool_calls ?? [];
  return {
    thinking: reasoning,
    reply: reply.trim(),
    toolCalls: native.length > 0 ? native.map(fromWire) : inlineCalls,
  };
}

/**
 * `text` without its `<tool_call>…</tool_call>` blocks, each body handed to `take` in order, as
 * `/<tool_call>([\s\S]*?)<\/tool_call>/g` would remove them but in one pass: an unclosed block
 * and everything after it stay (that pattern rescanned the rest from every later opening).
 */
function withoutBlocks(text: string, take: (body: string) => void): string {
  const open = "<tool_call>";
  const close = "</tool_call>";
  let kept = "";
  let at = 0;
  for (;;) {
    const start = text.indexOf(open, at);
    const end = start === -1 ? -1 : text.indexOf(close, start + open.length);
    if (end === -1) return kept + text.slice(at);
    take(text.slice(start + open.length, end));
    kept += text.slice(at, start);
    at = end + close.length;
  }
}

function splitThinking(content: string, atStart = true): { thinking: string; visible: string } {
  const open = content.indexOf(THINK_OPEN);
  const close = content.indexOf(THINK_CLOSE);
  if (atStart && close !== -1 && (open === -1 || close < open)) {
    // Thinking opened by the chat template: only its closing tag is in the output.
    const rest = splitThinking(content.slice(close + THINK_CLOSE.length), false);
    return { thinking: joinParts(content.slice(0, close), rest.thinking), visible: rest.visible };
  }
  if (open === -1) return { thinking: "", visible: content };
  const end = content.indexOf(THINK_CLOSE, open + THINK_OPEN.length);
  if (end === -1) return { thinking: content.slice(open + THINK_OPEN.length).trim(), visible: content.slice(0, open) };
  const rest = splitThinking(content.slice(end + THINK_CLOSE.length), false);
  return {
    thinking: joinParts(content.slice(open + THINK_OPEN.length, end), rest.thinking),
    visible: content.slice(0, open) + rest.visible,
  };
}

function joinParts(...parts: string[]): string {
  return parts
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .join("\n");
}

function fromWire(call: WireToolCall): VisibleToolCall {
  return { name: call.function.name, arguments: call.function.arguments };
}

/** A Hermes-style block `{"name": …, "arguments": {…}}`; shown as written when it does not parse. */
function parseInlineCall(body: string): VisibleToolCall {
  const text = body.trim();
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
      if (typeof name === "string") {
        return { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) };
      }
    }
  } catch {
    // Malformed call text is still shown to the judge verbatim.
  }
  return { name: "(unparsed)", arguments: text };
}
