import type { AssistantMessage } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { splitAssistant } from "./assistant-parts.js";

const wire = (name: string, args: string) => ({ id: `id-${name}`, type: "function" as const, function: { name, arguments: args } });

/** The parts of an assistant message with this content (and, in `extra`, native calls or reasoning). */
const split = (content: string | null, extra: Omit<AssistantMessage, "role" | "content"> = {}) => splitAssistant({ role: "assistant", content, ...extra });

describe("splitAssistant", () => {
  it("separates thinking, the visible reply and native tool calls", () => {
    const parts = split("<think>Look it up first.</think>\nOne moment.", { tool_calls: [wire("search", '{"q":"x"}')] });
    expect(parts).toEqual({ thinking: "Look it up first.", reply: "One moment.", toolCalls: [{ name: "search", arguments: '{"q":"x"}' }] });
  });

  it("treats content without think tags as the visible reply", () => {
    expect(split("Hello!")).toEqual({ thinking: "", reply: "Hello!", toolCalls: [] });
  });

  it("closes thinking opened by the chat template at a lone </think>", () => {
    expect(split("reasoning here</think>Answer.")).toMatchObject({
      thinking: "reasoning here",
      reply: "Answer.",
    });
  });

  it("runs an unclosed <think> to the end of the content", () => {
    expect(split("Hi <think>still thinking")).toMatchObject({ thinking: "still thinking", reply: "Hi" });
  });

  it("joins reasoning_content and several think blocks", () => {
    const parts = split("<think>a</think>x <think>b</think>y", { reasoning_content: "r" });
    expect(parts).toMatchObject({ thinking: "r\na\nb", reply: "x y" });
  });

  it("reads Hermes <tool_call> blocks in the visible reply as calls", () => {
    const parts = split('<think>call it</think>Sure.<tool_call>{"name": "book", "arguments": {"id": 7}}</tool_call>');
    expect(parts).toEqual({ thinking: "call it", reply: "Sure.", toolCalls: [{ name: "book", arguments: '{"id":7}' }] });
  });

  it("does not count a call written only inside the thinking", () => {
    const parts = split('<think>I will do <tool_call>{"name": "book", "arguments": {}}</tool_call></think>Done!');
    expect(parts.toolCalls).toEqual([]);
    expect(parts.thinking).toContain("<tool_call>");
    expect(parts.reply).toBe("Done!");
  });

  it("shows a malformed inline call verbatim rather than dropping it", () => {
    const parts = split("<tool_call>{not json</tool_call>");
    expect(parts.toolCalls).toEqual([{ name: "(unparsed)", arguments: "{not json" }]);
  });

  it("prefers native tool calls over inline blocks and removes the blocks from the reply", () => {
    const parts = split('<tool_call>{"name": "a", "arguments": {}}</tool_call>', { tool_calls: [wire("a", "{}")] });
    expect(parts).toEqual({ thinking: "", reply: "", toolCalls: [{ name: "a", arguments: "{}" }] });
  });

  it("reads a null content as empty", () => {
    expect(split(null)).toEqual({ thinking: "", reply: "", toolCalls: [] });
  });
});
