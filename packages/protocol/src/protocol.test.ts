import { describe, expect, it } from "vitest";
import {
  Cm2Record,
  Generation,
  Message,
  RecordError,
  Step,
  Task,
  ToolResult,
  Trajectory,
  parseRecord,
  readGenerateRequest,
  toWireToolCall,
  trustedRequest,
  type GenerateRequest,
} from "./index.js";

const act = {
  role: "act",
  text: '<tool_call>{"name":"get_balance","arguments":{"account":"A1"}}</tool_call>',
  promptTokens: [1, 2, 3],
  outputTokens: [4, 5],
  logprobs: [-0.1, -0.2],
  finishReason: "stop",
} satisfies Generation;

const trajectory: Trajectory = {
  id: "t1/0",
  taskId: "t1",
  rollout: 0,
  context: [
    { role: "system", content: "You are a bank agent." },
    { role: "user", content: "What is my balance?" },
  ],
  steps: [
    {
      type: "act",
      generation: act,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [toWireToolCall({ id: "c1", name: "get_balance", arguments: { account: "A1" } })],
      },
      outcomes: [
        {
          provenance: "rehearsed",
          call: { id: "c1", name: "get_balance", arguments: { account: "A1" } },
          result: { status: "ok", callId: "c1", name: "get_balance", content: { balance: 12.5, currency: "EUR" } },
          generation: { ...act, role: "rehearse", text: '<execution_result>{"balance":12.5}</execution_result>' },
        },
      ],
    },
    { type: "user", source: "replay", message: { role: "user", content: "Thanks." } },
  ],
  termination: { reason: "agent_stop" },
  reward: { status: "scored", value: 0.75, components: { db: 1, communicate: 0.75 } },
  metadata: { seed: 7 },
};

describe("JSON round trips", () => {
  it("keeps a trajectory with rehearsed and user steps intact", () => {
    const parsed = Trajectory.parse(JSON.parse(JSON.stringify(trajectory)));
    expect(parsed).toEqual(trajectory);
  });

  it("keeps the provenance of every tool outcome", () => {
    const step = Step.parse(JSON.parse(JSON.stringify(trajectory.steps[0])));
    expect(step.type === "act" && step.outcomes.map((o) => o.provenance)).toEqual(["rehearsed"]);
  });

  it("round-trips a CM2 record with checklists", () => {
    const record = {
      uuid: "r1",
      messages: [
        { role: "user", content: "Book a table" },
        {
          role: "assistant",
          content: "<think>need the date</think>",
          tool_calls: [{ id: "x", type: "function", function: { name: "book", arguments: '{"date":"2026-01-01"}' } }],
        },
        { role: "tool", tool_call_id: "x", content: '{"ok":true}' },
      ],
      tools: [{ type: "function", function: { name: "book", parameters: { type: "object", properties: {} } } }],
      checklists: [
        [
          [
            {
              id: "c1",
              evidence: [{ turn: 0, step: 0, from: "assistant", snippet: "book" }],
              focus_on: "assistant.tool_calls",
              question: "Did it book?",
              pass_condition: "book called",
              failure_examples: ["no call"],
              required_for_next_turn: true,
              dependence: [],
              weight: 0.6,
            },
            {
              id: "c2",
              evidence: [],
              focus_on: "assistant.content.user_visible_reply",
              question: "Did it confirm?",
              pass_condition: "says booked",
              failure_examples: [],
              required_for_next_turn: false,
              dependence: ["c1"],
              weight: 0.4,
            },
          ],
        ],
      ],
    };
    expect(Cm2Record.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
  });
});

describe("malformed records", () => {
  it("names the field of a bad message", () => {
    const result = Message.safeParse({ role: "assistant", content: null, tool_calls: [{ id: "1", type: "function", function: { name: 3 } }] });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) => i.path.join("."));
    expect(paths).toContain("tool_calls.0.function.name");
  });

  it("rejects logprobs that do not match the output tokens", () => {
    const result = Generation.safeParse({ ...act, logprobs: [-0.1] });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(["logprobs"]);
  });

  it("rejects a tool result that is neither ok nor error", () => {
    expect(ToolResult.safeParse({ status: "maybe", callId: "c", name: "n" }).success).toBe(false);
    expect(ToolResult.safeParse({ status: "error", callId: "c", name: "n", error: { message: "x" } }).success).toBe(false);
  });

  it("rejects checklist weights that do not sum to 1 and unknown dependencies", () => {
    const item = {
      id: "a",
      evidence: [],
      focus_on: "tool.content",
      question: "q",
      pass_condition: "p",
      failure_examples: [],
      required_for_next_turn: false,
      dependence: ["zzz"],
      weight: 0.5,
    };
    const error = (() => {
      try {
        parseRecord(
          Cm2Record,
          { uuid: "u", messages: [{ role: "user", content: "hi" }], tools: [], checklists: [[[item]]] },
          {
            file: "train.jsonl",
            line: 4,
          },
        );
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RecordError);
    const message = (error as RecordError).message;
    expect(message).toMatch(/^train\.jsonl:4: /);
    expect(message).toContain("checklists[0][0]: weights sum to 0.5, expected 1");
    expect(message).toContain('checklists[0][0][0].dependence[0]: depends on unknown item "zzz"');
  });

  it("gives a task default metadata", () => {
    expect(Task.parse({ id: "t", messages: [{ role: "user", content: "x" }], tools: [] }).metadata).toEqual({});
  });
});

describe("requests as policies read them", () => {
  const source = { file: "policy request" };

  it("checks a plain request and fills in the sampling defaults", () => {
    const read = readGenerateRequest({ role: "act", messages: [{ role: "user", content: "Hi" }], sampling: { maxTokens: 4 } }, source);
    expect(read).toEqual({
      role: "act",
      messages: [{ role: "user", content: "Hi" }],
      tools: [],
      sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 4, stop: [] },
    });
  });

  it("names the bad field of a plain request", () => {
    const bad = { role: "act", messages: [{ role: "user" }], sampling: {} } as never;
    expect(() => readGenerateRequest(bad, source)).toThrow(RecordError);
    expect(() => readGenerateRequest(bad, source)).toThrow("policy request: messages[0].content: ");
  });

  it("takes a trusted request as it is, the same object, unchecked", () => {
    const request: GenerateRequest = {
      role: "act",
      messages: [{ role: "user", content: "Hi" }],
      tools: [],
      sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 4, stop: [] },
    };
    expect(trustedRequest(request)).toBe(request);
    expect(readGenerateRequest(request, source)).toBe(request);
    // An equal request that nobody vouched for is checked: a fresh object comes back.
    const copy = structuredClone(request);
    expect(readGenerateRequest(copy, source)).not.toBe(copy);
    expect(readGenerateRequest(copy, source)).toEqual(request);
  });
});
