import type { Message, Trajectory } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { mentions, transcriptOf, userVisible } from "./transcript.js";

describe("userVisible", () => {
  it("drops thinking, closed or not", () => {
    expect(userVisible("<think>order o3</think> Done.")).toBe("Done.");
    expect(userVisible("Done. <think>still thinking about o3")).toBe("Done.");
    expect(userVisible("a<think>x</think>b<think>y</think>c")).toBe("abc");
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
      { role: "assistant", content: "thinking aloud", tool_calls: [{ id: "1", type: "function", function: { name: "user", arguments: "{}" } }] },
    ];
    expect(transcriptOf(messages).reply).toBe("");
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
