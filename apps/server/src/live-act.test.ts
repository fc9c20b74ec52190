import type { Generation } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { LiveActStream } from "./live-act.js";
import { toChoice, type ChoiceOptions, type ChunkChoice } from "./response.js";

const options: ChoiceOptions = {
  tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
  parseToolCalls: true,
  callIdPrefix: "abc_0",
};
const generation = (text: string): Generation => ({ role: "act", text, promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" });

/** Feed `text` one character at a time; what was released after each character, then the finish. */
function run(text: string): { after: ChunkChoice[][]; finish: ChunkChoice[] } {
  const live = new LiveActStream(options);
  const after = Array.from(text, (char) => live.push(char));
  return { after, finish: live.finish(toChoice(generation(text), 0, options), text) };
}

const content = (chunks: readonly ChunkChoice[]): string => chunks.map((c) => c.delta.content ?? "").join("");
const calls = (chunks: readonly ChunkChoice[]) => chunks.flatMap((c) => c.delta.tool_calls ?? []);

describe("LiveActStream", () => {
  const call = '<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>';

  it("sends text before a tool call as it comes and the call as soon as its block closes", () => {
    const text = `Let me look. ${call}`;
    const { after, finish } = run(text);
    const upTo = (end: number) => after.slice(0, end).flat();
    // "Let me look." is out before the block opens; its trailing space is held (the parser trims it).
    expect(content(upTo("Let me look. ".length))).toBe("Let me look.");
    // Nothing of the block goes out until it closes; then the call, with the id the non-streaming answer gives it.
    expect(calls(upTo(text.length - 1))).toEqual([]);
    expect(calls(after.at(-1)!)).toEqual([
      { index: 0, id: "call_abc_0_0", type: "function", function: { name: "lookup", arguments: "" } },
      { index: 0, function: { arguments: '{"item":"rabo"}' } },
    ]);
    expect(finish).toEqual([{ index: 0, delta: {}, finish_reason: "tool_calls", logprobs: null }]);
  });

  it("holds a tail that may open a tag, and releases it once it cannot", () => {
    const { after } = run("a <tool b");
    // "<tool" could still become "<tool_call>" until the space after it.
    expect(after.map(content)).toEqual(["a", "", "", "", "", "", "", " <tool", " b"]);
  });

  it("holds output that starts with whitespace until the end, where the choice trims it", () => {
    const { after, finish } = run("  Shelf 4.");
    expect(after.flat()).toEqual([]);
    expect(content(finish)).toBe("Shelf 4.");
    expect(finish.at(-1)!.finish_reason).toBe("stop");
  });

  it("after a call it sent, an unreadable block makes the rest of the raw text content", () => {
    const text = `Looking. ${call}<tool_call>{oops</tool_call>`;
    const { after, finish } = run(text);
    const all = [...after.flat(), ...finish];
    // Without streaming the whole output is one unreadable message; streamed, the call was already out.
    expect(toChoice(generation(text), 0, options).message).toEqual({ role: "assistant", content: text });
    expect(calls(all).filter((c) => c.id !== undefined)).toHaveLength(1);
    expect(content(all)).toBe(text);
    expect(finish.at(-1)!.finish_reason).toBe("stop");
  });
});
