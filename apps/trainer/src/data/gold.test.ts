import type { AssistantMessage, JsonValue, Message, Task, ToolResult } from "@envace/protocol";
import { parseActOutput, parseRehearseOutput } from "@envace/trajectory";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actText, executionResultText, referenceGold, toolResultOf } from "./gold.js";

const TOOLS = ["lookup", "book", "cancel"].map((name) => ({ type: "function" as const, function: { name, parameters: { type: "object" } } }));
const CALL = { id: "c1", name: "lookup", arguments: { id: 7 } };

function task(reference: Message[]): Task {
  return { id: "t", messages: reference.slice(0, 2), tools: TOOLS, reference, metadata: {} };
}

function calling(...calls: [id: string, name: string, args: string][]): AssistantMessage {
  return { role: "assistant", content: null, tool_calls: calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } })) };
}

const START: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Book flight 7." },
];

describe("tool results of real tool messages", () => {
  it("are JSON objects and arrays as written", () => {
    expect(toolResultOf(CALL, '{"seats": [1, 2]}')).toEqual({ status: "ok", callId: "c1", name: "lookup", content: { seats: [1, 2] } });
    expect(toolResultOf(CALL, "[]")).toEqual({ status: "ok", callId: "c1", name: "lookup", content: [] });
  });

  it("are tool errors when the only key is an {code, message} error, or a bare message (EXECUTION_ERROR)", () => {
    expect(toolResultOf(CALL, '{"error": {"code": "FULL", "message": "no seat left"}}')).toEqual({
      status: "error",
      callId: "c1",
      name: "lookup",
      error: { code: "FULL", message: "no seat left" },
    });
    expect(toolResultOf(CALL, '{"error": "timeout"}')).toMatchObject({ status: "error", error: { code: "EXECUTION_ERROR", message: "timeout" } });
  });

  it("wrap what the Rehearse role could not write verbatim as {result}", () => {
    expect(toolResultOf(CALL, "flight 7: 2 seats")).toMatchObject({ content: { result: "flight 7: 2 seats" } });
    expect(toolResultOf(CALL, "42")).toMatchObject({ content: { result: 42 } });
    expect(toolResultOf(CALL, '{"error": null}')).toMatchObject({ status: "ok", content: { result: { error: null } } });
    // An error key beside others is an ordinary result.
    expect(toolResultOf(CALL, '{"error": null, "seats": 2}')).toMatchObject({ status: "ok", content: { error: null, seats: 2 } });
  });

  it("are written as compact <execution_result> JSON", () => {
    expect(executionResultText(toolResultOf(CALL, '{ "seats" : 2 }'))).toBe('<execution_result>{"seats":2}</execution_result>');
    expect(executionResultText(toolResultOf(CALL, '{"error": "timeout"}'))).toBe(
      '<execution_result>{"error":{"code":"EXECUTION_ERROR","message":"timeout"}}</execution_result>',
    );
  });
});

describe("Act texts", () => {
  it("put separate reasoning in <think>, then the content, then one block per call", () => {
    const message: AssistantMessage = { role: "assistant", content: "Checking.", reasoning_content: " Need the flight. " };
    expect(actText(message, [CALL])).toBe('<think>Need the flight.</think>\nChecking.\n<tool_call>{"name":"lookup","arguments":{"id":7}}</tool_call>');
    expect(actText({ role: "assistant", content: "<think>a</think>b", reasoning_content: "a" }, [])).toBe("<think>a</think>b");
    expect(actText({ role: "assistant", content: null }, [CALL])).toBe('<tool_call>{"name":"lookup","arguments":{"id":7}}</tool_call>');
  });
});

describe("reference dialogues that cannot be gold targets", () => {
  it("report each problem by message and field", () => {
    const reference: Message[] = [
      ...START,
      { role: "tool", tool_call_id: "c0", content: "{}" },
      calling(["c1", "lookup", '{"id": 7}'], ["c1", "book", '{"id": 7}'], ["c2", "book", "{id: 7}"]),
      { role: "tool", tool_call_id: "c1", content: "{}" },
      { role: "tool", tool_call_id: "c1", content: "{}" },
      { role: "tool", tool_call_id: "c9", content: "{}" },
      { role: "assistant", content: "" },
    ];
    expect(referenceGold(task(reference)).problems).toEqual([
      { path: "messages[2].tool_call_id", message: 'a tool message (call "c0") that follows no assistant tool call' },
      { path: "messages[3].tool_calls[1].id", message: 'duplicate call id "c1"' },
      { path: "messages[3].tool_calls[2].function.arguments", message: expect.stringMatching(/^not JSON \(/) as string },
      { path: "messages[5].tool_call_id", message: 'call "c1" is answered twice' },
      { path: "messages[6].tool_call_id", message: '"c9" answers no call of the assistant turn at messages[3]' },
      { path: "messages[7]", message: "the Act parser cannot read this turn: NO_TOOL_CALL_FOUND (empty output: no reply and no tool call)" },
    ]);
  });

  it("have no problem and no example before the first user message", () => {
    const reference: Message[] = [{ role: "assistant", content: "Hello, how can I help?" }, ...START, { role: "assistant", content: "Done." }];
    const gold = referenceGold({ ...task(reference), messages: reference.slice(0, 3) });
    expect(gold.problems).toEqual([]);
    expect(gold.examples.map((e) => e.text)).toEqual(["Done."]);
  });
});

const argumentValue: fc.Arbitrary<JsonValue> = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }));
const key = fc.stringMatching(/^[a-z]{1,6}$/);
const callArguments = fc.dictionary(key, argumentValue, { maxKeys: 4 });
const toolContent = fc.oneof(
  fc.dictionary(key, argumentValue, { maxKeys: 3 }).map((v) => JSON.stringify(v)),
  fc.array(argumentValue, { maxLength: 3 }).map((v) => JSON.stringify(v)),
  fc.record({ code: fc.stringMatching(/^[A-Z_]{1,10}$/), message: fc.string() }).map((error) => JSON.stringify({ error })),
  fc.string().map((message) => JSON.stringify({ error: message })),
  fc.stringMatching(/^[a-z :,]{0,20}$/),
  fc.integer().map(String),
);
const turn = fc.record({
  content: fc.option(fc.stringMatching(/^[a-z ,.]{0,20}$/), { nil: null }),
  reasoning: fc.option(fc.stringMatching(/^[a-z][a-z ]{0,11}$/), { nil: undefined }),
  calls: fc.array(fc.record({ name: fc.constantFrom("lookup", "book", "cancel"), args: callArguments, result: toolContent }), { maxLength: 3 }),
});

describe("every gold example", () => {
  it("parses back to its own target: Act texts to the turn's calls or reply, Rehearse texts to the real result", () => {
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 4 }), (turns) => {
        const reference: Message[] = [...START];
        let next = 0;
        for (const t of turns) {
          const ids = t.calls.map(() => `call_${next++}`);
          const message: AssistantMessage = { role: "assistant", content: t.content };
          if (t.reasoning !== undefined) message.reasoning_content = t.reasoning;
          if (t.calls.length > 0)
            message.tool_calls = t.calls.map((c, k) => ({ id: ids[k]!, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
          else if ((t.content ?? "").trim() === "") message.content = "ok";
          reference.push(message, ...t.calls.map((c, k): Message => ({ role: "tool", tool_call_id: ids[k]!, content: c.result })));
        }
        const { examples, problems } = referenceGold(task(reference));
        expect(problems).toEqual([]);
        expect(examples.filter((e) => e.role === "act")).toHaveLength(turns.length);
        for (const example of examples) {
          if (example.role === "act") {
            const parsed = parseActOutput({ text: example.text }, { tools: TOOLS });
            const calls = (example.target.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown }));
            if (calls.length === 0) expect(parsed).toMatchObject({ kind: "reply", content: example.target.content!.trim() });
            else expect(parsed.kind === "tool_calls" && parsed.calls.map((c) => ({ name: c.name, arguments: c.arguments }))).toEqual(calls);
            if (example.target.reasoning_content !== undefined) expect(parsed.reasoning).toBe(example.target.reasoning_content.trim());
          } else {
            const parsed = parseRehearseOutput(example.text);
            expect(parsed).toEqual(expected(example.result));
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

function expected(result: ToolResult): ReturnType<typeof parseRehearseOutput> {
  return result.status === "ok"
    ? { kind: "result", content: result.content, reasoning: undefined }
    : { kind: "tool_error", error: result.error, reasoning: undefined };
}
