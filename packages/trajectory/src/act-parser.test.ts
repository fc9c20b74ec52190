import fc from "fast-check";
import { ActParseErrorCode, type ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { parseActOutput, type ActOutput, type ActParserOptions } from "./act-parser.js";
import { adversarialText, expectParseError } from "./testing/fixtures.js";

const tools: ToolSpec[] = [
  { type: "function", function: { name: "get_balance", parameters: { type: "object", properties: { account: { type: "string" } } } } },
  { type: "function", function: { name: "transfer" } },
];
const options: ActParserOptions = { tools };

function parse(text: string, extra: Partial<ActParserOptions> = {}): ActOutput {
  return parseActOutput({ text }, { ...options, ...extra });
}

function expectError(output: ActOutput, code: ActParseErrorCode): string {
  expect(output.kind).toBe("error");
  if (output.kind !== "error") throw new Error("unreachable");
  expect(output.code).toBe(code);
  return output.detail;
}

describe("parseActOutput: Hermes <tool_call> blocks", () => {
  it("reads one call and strips the reasoning", () => {
    const output = parse('<think>\nCheck first.\n</think>\n\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call>');
    expect(output).toEqual({
      kind: "tool_calls",
      calls: [{ id: "call_0", name: "get_balance", arguments: { account: "me" } }],
      content: "",
      reasoning: "Check first.",
      message: {
        role: "assistant",
        content: "",
        reasoning_content: "Check first.",
        tool_calls: [{ id: "call_0", type: "function", function: { name: "get_balance", arguments: '{"account":"me"}' } }],
      },
    });
  });

  it("reads several blocks in order, keeps the text around them, and numbers calls with callId", () => {
    const output = parse(
      'Let me do both.\n<tool_call>{"name": "transfer", "arguments": {"to": "Bob"}}</tool_call>\n<tool_call>{"name": "get_balance", "arguments": {}}</tool_call>',
      { callId: (i) => `t3_${i}` },
    );
    expect(output.kind).toBe("tool_calls");
    if (output.kind !== "tool_calls") return;
    expect(output.content).toBe("Let me do both.");
    expect(output.calls).toEqual([
      { id: "t3_0", name: "transfer", arguments: { to: "Bob" } },
      { id: "t3_1", name: "get_balance", arguments: {} },
    ]);
  });

  it("reads a JSON list of calls inside one block", () => {
    const output = parse('<tool_call>[{"name": "transfer", "arguments": {"amount": 5}}, {"name": "get_balance", "arguments": {"account": "me"}}]</tool_call>');
    expect(output.kind === "tool_calls" && output.calls.map((c) => [c.id, c.name])).toEqual([
      ["call_0", "transfer"],
      ["call_1", "get_balance"],
    ]);
  });

  it("decodes arguments given as a JSON string, and reads a block left open at the end", () => {
    const output = parse('<tool_call>{"name": "transfer", "arguments": "{\\"amount\\": 5}"}');
    expect(output.kind === "tool_calls" && output.calls[0]!.arguments).toEqual({ amount: 5 });
  });

  it("accepts other argument keys and other tags when configured", () => {
    const output = parse('[TOOL]{"name": "transfer", "parameters": {"amount": 1}}[/TOOL]', {
      toolCallTags: { open: "[TOOL]", close: "[/TOOL]" },
      argumentKeys: ["arguments", "parameters"],
    });
    expect(output.kind === "tool_calls" && output.calls[0]!.arguments).toEqual({ amount: 1 });
  });
});

describe("parseActOutput: native OpenAI tool_calls", () => {
  const native = [{ id: "srv-1", type: "function" as const, function: { name: "transfer", arguments: '{"to": "Bob", "amount": 5}' } }];

  it("takes the server's calls, their ids and their exact argument strings", () => {
    const output = parseActOutput({ text: "Sending now.", reasoning: "Bob asked.", toolCalls: native }, options);
    expect(output).toEqual({
      kind: "tool_calls",
      calls: [{ id: "srv-1", name: "transfer", arguments: { to: "Bob", amount: 5 } }],
      content: "Sending now.",
      reasoning: "Bob asked.",
      message: { role: "assistant", content: "Sending now.", reasoning_content: "Bob asked.", tool_calls: native },
    });
  });

  it("checks native calls like text calls", () => {
    const bad = [{ id: "x", type: "function" as const, function: { name: "transfer", arguments: "{oops" } }];
    expectError(parseActOutput({ text: "", toolCalls: bad }, options), "JSON_DECODE_ERROR");
    const unknown = [{ id: "x", type: "function" as const, function: { name: "rm_rf", arguments: "{}" } }];
    expectError(parseActOutput({ text: "", toolCalls: unknown }, options), "INVALID_TOOL_NAME");
  });

  it("ignores native calls when only the Hermes format is accepted, and text calls when only OpenAI is", () => {
    expect(parseActOutput({ text: "Hello.", toolCalls: native }, { ...options, formats: ["hermes"] }).kind).toBe("reply");
    expect(parse('<tool_call>{"name": "transfer", "arguments": {}}</tool_call>', { formats: ["openai"] }).kind).toBe("reply");
  });
});

describe("parseActOutput: replies", () => {
  it("treats plain text as a reply that ends the agent's turn", () => {
    expect(parse("<think>Done.</think>\n\nYour balance is 12.")).toEqual({
      kind: "reply",
      content: "Your balance is 12.",
      reasoning: "Done.",
      message: { role: "assistant", content: "Your balance is 12.", reasoning_content: "Done." },
    });
  });

  it("reads reasoning whose opening tag was in the prompt", () => {
    const output = parse("The user wants the balance.\n</think>\n\nIt is 12.");
    expect(output.kind === "reply" && [output.reasoning, output.content]).toEqual(["The user wants the balance.", "It is 12."]);
  });

  it("leaves reasoning tags that do not lead the output in the content", () => {
    const output = parse("Note: <think> is a tag.");
    expect(output.kind === "reply" && output.content).toBe("Note: <think> is a tag.");
  });
});

describe("parseActOutput: failure codes", () => {
  it("NO_TOOL_CALL_FOUND: markup without a recoverable call, or nothing to act on", () => {
    expectError(parse("<tool_call>\n</tool_call>"), "NO_TOOL_CALL_FOUND");
    expectError(parse("<tool_call>[]</tool_call>"), "NO_TOOL_CALL_FOUND");
    expectError(parse('<tool_call>"get_balance"</tool_call>'), "NO_TOOL_CALL_FOUND");
    expectError(parse('<tool_call>[{"name": "transfer", "arguments": {}}, 3]</tool_call>'), "NO_TOOL_CALL_FOUND");
    expectError(parse('{"name": "transfer"}</tool_call>'), "NO_TOOL_CALL_FOUND");
    expectError(parse(""), "NO_TOOL_CALL_FOUND");
    expectError(parse("<think>I keep thinking"), "NO_TOOL_CALL_FOUND");
    expectError(parse("<think>All thought, nothing said.</think>"), "NO_TOOL_CALL_FOUND");
  });

  it("JSON_DECODE_ERROR: a block or an arguments string that is not JSON", () => {
    const detail = expectError(parse("<tool_call>{name: transfer}</tool_call>"), "JSON_DECODE_ERROR");
    expect(detail).toContain("<tool_call> block 1");
    expectError(parse('<tool_call>{"name": "transfer", "arguments": "{amount: 5"}</tool_call>'), "JSON_DECODE_ERROR");
  });

  it("INVALID_TOOL_NAME: no name, or a tool the task does not offer", () => {
    const detail = expectError(parse('<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>'), "INVALID_TOOL_NAME");
    expect(detail).toContain('unknown tool "delete_all" (available: get_balance, transfer)');
    expectError(parse('<tool_call>{"arguments": {}}</tool_call>'), "INVALID_TOOL_NAME");
    expectError(parse('<tool_call>{"name": 7, "arguments": {}}</tool_call>'), "INVALID_TOOL_NAME");
  });

  it("NO_ARGUMENTS: missing, null or empty arguments", () => {
    expectError(parse('<tool_call>{"name": "transfer"}</tool_call>'), "NO_ARGUMENTS");
    expectError(parse('<tool_call>{"name": "transfer", "arguments": null}</tool_call>'), "NO_ARGUMENTS");
    expectError(parse('<tool_call>{"name": "transfer", "arguments": " "}</tool_call>'), "NO_ARGUMENTS");
  });

  it("NON_SERIALIZABLE_ARGUMENTS: arguments that are not a JSON object, or hold numbers JSON cannot carry", () => {
    expectError(parse('<tool_call>{"name": "transfer", "arguments": [1, 2]}</tool_call>'), "NON_SERIALIZABLE_ARGUMENTS");
    expectError(parse('<tool_call>{"name": "transfer", "arguments": 5}</tool_call>'), "NON_SERIALIZABLE_ARGUMENTS");
    expectError(parse('<tool_call>{"name": "transfer", "arguments": "[1]"}</tool_call>'), "NON_SERIALIZABLE_ARGUMENTS");
    const detail = expectError(parse('<tool_call>{"name": "transfer", "arguments": {"amount": 1e999}}</tool_call>'), "NON_SERIALIZABLE_ARGUMENTS");
    expect(detail).toContain("Infinity");
  });

  it("returns a typed result for pathologically deep arguments instead of overflowing the stack", () => {
    const depth = 200_000;
    const deep = `<tool_call>{"name": "transfer", "arguments": {"a": ${"[".repeat(depth)}${"]".repeat(depth)}}}</tool_call>`;
    const output = parse(deep);
    expect(["tool_calls", "error"]).toContain(output.kind);
    if (output.kind === "error") expect(["JSON_DECODE_ERROR", "NON_SERIALIZABLE_ARGUMENTS"]).toContain(output.code);
  });

  it("fails the whole output when any call fails, and keeps the visible text and reasoning", () => {
    const output = parse(
      '<think>Hmm.</think>Both:<tool_call>{"name": "transfer", "arguments": {}}</tool_call><tool_call>{"name": "nope", "arguments": {}}</tool_call>',
    );
    expect(output).toMatchObject({ kind: "error", code: "INVALID_TOOL_NAME", content: "Both:", reasoning: "Hmm." });
  });
});

const toolNames = ["get_balance", "transfer"];
const fragments = fc.constantFrom(
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  '"',
  "\\",
  "\n",
  " ",
  '"name"',
  '"arguments"',
  '"get_balance"',
  '"transfer"',
  "null",
  "1e999",
  "-0",
  "{}",
  "[]",
  '"{}"',
  "\u0000",
  "\ud800",
);
const adversarial = adversarialText(fragments);

function assertTyped(output: ActOutput): void {
  if (output.kind === "error") {
    expectParseError(output, ActParseErrorCode.options);
  } else if (output.kind === "tool_calls") {
    expect(output.calls.length).toBeGreaterThan(0);
    for (const call of output.calls) {
      expect(toolNames).toContain(call.name);
      expect(typeof call.arguments === "object" && !Array.isArray(call.arguments)).toBe(true);
    }
    expect(output.message.tool_calls?.map((c) => JSON.parse(c.function.arguments) as unknown)).toEqual(output.calls.map((c) => c.arguments));
  } else {
    expect(output.kind).toBe("reply");
    expect(output.content.length).toBeGreaterThan(0);
  }
}

describe("parseActOutput properties", () => {
  it("never throws on random strings and always returns a typed result", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        assertTyped(parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it("never throws on adversarial mixes of markup, JSON fragments and broken Unicode", () => {
    fc.assert(
      fc.property(adversarial, (text) => {
        assertTyped(parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it("never throws on random native tool calls", () => {
    const wire = fc.record({
      id: fc.string({ minLength: 1, maxLength: 5 }),
      type: fc.constant("function" as const),
      function: fc.record({ name: fc.oneof(fc.constantFrom(...toolNames), fc.string()), arguments: fc.oneof(fc.json(), adversarial) }),
    });
    fc.assert(
      fc.property(adversarial, fc.array(wire, { maxLength: 4 }), (text, toolCalls) => {
        assertTyped(parseActOutput({ text, toolCalls }, options));
      }),
      { numRuns: 500 },
    );
  });

  it("parses every well-formed call back to itself", () => {
    const args = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }));
    const call = fc.record({ name: fc.constantFrom(...toolNames), arguments: args });
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 3 }), fc.boolean(), (calls, asList) => {
        const text = asList
          ? `<tool_call>${JSON.stringify(calls)}</tool_call>`
          : calls.map((c) => `<tool_call>\n${JSON.stringify(c)}\n</tool_call>`).join("\n");
        const output = parse(`<think>plan</think>${text}`);
        expect(output.kind).toBe("tool_calls");
        if (output.kind !== "tool_calls") return;
        // JSON has no -0; compare through JSON.
        expect(JSON.parse(JSON.stringify(output.calls.map((c) => ({ name: c.name, arguments: c.arguments }))))).toEqual(JSON.parse(JSON.stringify(calls)));
      }),
      { numRuns: 300 },
    );
  });
});
