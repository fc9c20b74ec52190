import type { Message, Trajectory } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { mentions, transcriptOf } from "./transcript.js";

const replyOf = (assistant: Extract<Message, { role: "assistant" }>) => transcriptOf([{ role: "user", content: "hi" }, assistant]).reply;

describe("the reply", () => {
  it("is what the user sees: thinking, closed or not, and reasoning_content left out", () => {
    expect(replyOf({ role: "assistant", content: "<think>order o3</think> Done." })).toBe("Done.");
    expect(replyOf({ role: "assistant", content: "Done. <think>still thinking about o3" })).toBe("Done.");
    expect(replyOf({ role: "assistant", content: "a<think>x</think>b<think>y</think>c" })).toBe("abc");
    expect(replyOf({ role: "assistant", content: "Done.", reasoning_content: "o3" })).toBe("Done.");
  });

  it("is empty when the last step calls a tool, natively or in a <tool_call> block", () => {
    expect(replyOf({ role: "assistant", content: 'Sure. <tool_call>{"name":"user","arguments":{"name":"ada"}}</tool_call>' })).toBe("");
  });
});

describe("mentions", () => {
  it("matches whole words, ignoring case and commas", () => {
    expect(mentions("New order O5, cost 12.", ["o5"])).toBe(true);
    expect(mentions("order o15", ["o1"])).toBe(false);
    expect(mentions("paid 1,4", ["14"])).toBe(true);
    expect(mentions("paid 140", ["14"])).toBe(false);
    expect(mentions("there is NO ITEM rabo", ["no item", "unknown"])).toBe(true);
    expect(mentions("unlocked", ["locked"])).toBe(false);
    expect(mentions("a*b (x)", ["*b (x"])).toBe(true);
  });
});

describe("transcriptOf", () => {
  it("reads calls from OpenAI messages, keeping undecodable arguments as null, and the final reply", () => {
    const messages: Message[] = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "1", type: "function", function: { name: "user", arguments: '{"name":"ada"}' } },
          { id: "2", type: "function", function: { name: "buy", arguments: "{oops" } },
          { id: "3", type: "function", function: { name: "buy", arguments: "[1]" } },
        ],
      },
      { role: "tool", tool_call_id: "1", content: "{}" },
      { role: "assistant", content: "<think>hm</think>Done: order o4." },
    ];
    expect(transcriptOf(messages)).toEqual({
      calls: [
        { name: "user", arguments: { name: "ada" } },
        { name: "buy", arguments: null },
        { name: "buy", arguments: null },
      ],
      reply: "Done: order o4.",
    });
  });

  it("has no reply when the dialogue ends on a tool call", () => {
    const messages: Message[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "thinking aloud", tool_calls: [{ id: "1", type: "function", function: { name: "user", arguments: "{}" } }] },
    ];
    expect(transcriptOf(messages)).toEqual({ calls: [{ name: "user", arguments: {} }], reply: "" });
  });

  it("reads Hermes <tool_call> blocks of the visible reply as calls, but not those inside thinking", () => {
    const messages: Message[] = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: '<think><tool_call>{"name":"pay","arguments":{}}</tool_call></think><tool_call>{"name":"item","arguments":{"name":"kelo"}}</tool_call>',
      },
      { role: "tool", tool_call_id: "x", content: "{}" },
      { role: "assistant", content: "Done." },
    ];
    expect(transcriptOf(messages)).toEqual({ calls: [{ name: "item", arguments: { name: "kelo" } }], reply: "Done." });
  });

  it("reads a rollout's calls from its outcomes, rehearsed or grounded", () => {
    const generation = { role: "act" as const, text: "", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" as const };
    const call = { id: "c1", name: "item", arguments: { name: "kelo" } };
    const trajectory: Trajectory = {
      id: "t/0",
      taskId: "t",
      rollout: 0,
      context: [{ role: "user", content: "hi" }],
      steps: [
        {
          type: "act",
          generation,
          message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "item", arguments: '{"name":"kelo"}' } }] },
          outcomes: [{ provenance: "rehearsed", call, result: { status: "ok", callId: "c1", name: "item", content: { price: 1 } } }],
        },
        {
          type: "act",
          generation,
          message: { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "pay", arguments: "{bad" } }] },
          outcomes: [],
        },
        { type: "act", generation, message: { role: "assistant", content: "Sorry." }, outcomes: [] },
      ],
      termination: { reason: "agent_stop" },
      metadata: {},
    };
    expect(transcriptOf(trajectory)).toEqual({
      calls: [
        { name: "item", arguments: { name: "kelo" } },
        { name: "pay", arguments: null },
      ],
      reply: "Sorry.",
    });
  });
});
