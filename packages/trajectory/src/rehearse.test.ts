import fc from "fast-check";
import type { Message, ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { CallRejectionCode } from "@envace/protocol";
import { ToolCallValidator, ToolSchemaError } from "./call-validator.js";
import { parseRehearseOutput, RehearseParseErrorCode, type RehearseOutput } from "./rehearse-parser.js";
import { buildRehearsePrompt, DEFAULT_REHEARSE_INSTRUCTIONS, type RehearseRequest } from "./rehearse-prompt.js";
import { adversarialText, bankTools, callingTurn, expectParseError } from "./testing/fixtures.js";

describe("parseRehearseOutput", () => {
  it("reads a JSON object after optional reasoning", () => {
    expect(parseRehearseOutput('<think>\nBalance was 12, minus 5.\n</think>\n<execution_result>\n{"balance": 7}\n</execution_result>')).toEqual({
      kind: "result",
      content: { balance: 7 },
      reasoning: "Balance was 12, minus 5.",
    });
  });

  it("reads a JSON array, a fenced block, and a block left open at the end", () => {
    expect(parseRehearseOutput('<execution_result>[{"id": 1}, {"id": 2}]</execution_result>')).toMatchObject({ content: [{ id: 1 }, { id: 2 }] });
    expect(parseRehearseOutput('<execution_result>\n```json\n{"ok": true}\n```\n</execution_result>')).toMatchObject({ content: { ok: true } });
    expect(parseRehearseOutput('<execution_result>{"ok": true}')).toMatchObject({ content: { ok: true } });
  });

  it("reads a predicted tool error, with or without a code", () => {
    expect(parseRehearseOutput('<execution_result>{"error": {"code": "INSUFFICIENT_FUNDS", "message": "Balance 3 < 5."}}</execution_result>')).toEqual({
      kind: "tool_error",
      error: { code: "INSUFFICIENT_FUNDS", message: "Balance 3 < 5." },
      reasoning: undefined,
    });
    expect(parseRehearseOutput('<execution_result>{"error": "no such account"}</execution_result>')).toMatchObject({
      kind: "tool_error",
      error: { code: "EXECUTION_ERROR", message: "no such account" },
    });
    // `error` beside other keys is an ordinary result.
    expect(parseRehearseOutput('<execution_result>{"error": null, "data": 1}</execution_result>')).toMatchObject({ kind: "result" });
  });

  it("fails with typed codes", () => {
    const code = (text: string): string | undefined => {
      const output = parseRehearseOutput(text);
      return output.kind === "error" ? output.code : undefined;
    };
    expect(code('{"balance": 7}')).toBe("NO_EXECUTION_RESULT");
    expect(code("<think>still thinking")).toBe("NO_EXECUTION_RESULT");
    expect(code("<execution_result></execution_result>")).toBe("NO_EXECUTION_RESULT");
    expect(code("<execution_result>{balance: 7}</execution_result>")).toBe("JSON_DECODE_ERROR");
    expect(code("<execution_result>42</execution_result>")).toBe("INVALID_RESULT");
    expect(code('<execution_result>{"error": {"code": 3}}</execution_result>')).toBe("INVALID_RESULT");
  });

  it("uses configured tags", () => {
    expect(parseRehearseOutput("<result>[1]</result>", { resultTags: { open: "<result>", close: "</result>" } })).toMatchObject({ content: [1] });
  });

  const fragments = fc.constantFrom(
    "<think>",
    "</think>",
    "<execution_result>",
    "</execution_result>",
    "{",
    "}",
    "[",
    "]",
    '"error"',
    ":",
    ",",
    '"code"',
    '"message"',
    '"x"',
    "```",
    "```json\n",
    "\n",
    "1e999",
    "null",
    "\ud800",
  );
  const adversarial = adversarialText(fragments);

  function assertTyped(output: RehearseOutput): void {
    if (output.kind === "error") {
      expectParseError(output, RehearseParseErrorCode.options);
    } else if (output.kind === "tool_error") {
      expect(output.error.code.length).toBeGreaterThan(0);
    } else {
      expect(typeof output.content === "object" && output.content !== null).toBe(true);
    }
  }

  it("never throws on random or adversarial strings and always returns a typed result", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), adversarial), (text) => assertTyped(parseRehearseOutput(text))),
      {
        numRuns: 1500,
      },
    );
  });

  it("reads back every JSON object or array it is given", () => {
    // An object whose only key is "error" is a predicted failure, not a result: leave those out.
    const object = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })).filter((o) => !(Object.keys(o).length === 1 && "error" in o));
    const value = fc.oneof(object, fc.array(fc.jsonValue({ maxDepth: 2 })));
    fc.assert(
      fc.property(value, (content) => {
        const output = parseRehearseOutput(`<execution_result>${JSON.stringify(content)}</execution_result>`);
        expect(output).toEqual({ kind: "result", content: JSON.parse(JSON.stringify(content)) as unknown, reasoning: undefined });
      }),
      { numRuns: 300 },
    );
  });
});

// The fixture bank's transfer with a schema strict enough for the validator to refuse calls.
const bankTransfer = bankTools.find((tool) => tool.function.name === "transfer")!;
const transfer: ToolSpec = {
  type: "function",
  function: {
    ...bankTransfer.function,
    parameters: {
      ...bankTransfer.function.parameters,
      properties: { to: { type: "string" }, amount: { type: "number", exclusiveMinimum: 0 } },
      additionalProperties: false,
    },
  },
};

describe("ToolCallValidator: format, then whitelist, then JSON Schema", () => {
  const validator = new ToolCallValidator([transfer, { type: "function", function: { name: "ping" } }]);

  it("accepts a valid call", () => {
    expect(validator.check({ id: "c1", name: "transfer", arguments: { to: "Bob", amount: 5 } })).toEqual({
      ok: true,
      call: { id: "c1", name: "transfer", arguments: { to: "Bob", amount: 5 } },
    });
    expect(validator.check({ id: "c2", name: "ping", arguments: { anything: true } }).ok).toBe(true);
  });

  it("refuses a malformed call first", () => {
    expect(validator.check({ id: "c1", name: "nope", arguments: [1] })).toMatchObject({
      ok: false,
      callId: "c1",
      name: "nope",
      error: { code: "INVALID_TOOL_CALL_FORMAT", message: "The tool call is malformed: arguments must be a JSON object, got array." },
    });
    expect(validator.check("transfer")).toMatchObject({ ok: false, callId: "invalid-call", name: "unknown", error: { code: "INVALID_TOOL_CALL_FORMAT" } });
  });

  it("then a tool outside the whitelist, even with bad arguments", () => {
    expect(validator.check({ id: "c1", name: "delete_all", arguments: { amount: "x" } })).toMatchObject({
      ok: false,
      error: { code: "TOOL_NOT_AVAILABLE", message: 'Tool "delete_all" is not available. Available tools: transfer, ping.' },
    });
  });

  it("then arguments against the schema, naming every violation", () => {
    expect(validator.check({ id: "c1", name: "transfer", arguments: { amount: -1, memo: "hi" } })).toMatchObject({
      ok: false,
      error: {
        code: "INVALID_PARAMETERS",
        message:
          "Invalid parameters for \"transfer\": arguments must have required property 'to', arguments must NOT have additional properties, arguments/amount must be > 0.",
      },
    });
  });

  it("uses only the three rejection codes", () => {
    expect(CallRejectionCode.options).toEqual(["INVALID_TOOL_CALL_FORMAT", "TOOL_NOT_AVAILABLE", "INVALID_PARAMETERS"]);
  });

  it("refuses a task whose tool schema is not JSON Schema, naming the tool", () => {
    const build = () => new ToolCallValidator([{ type: "function", function: { name: "bad", parameters: { type: "dict" } } }]);
    expect(build).toThrow('tool "bad": parameters are not a valid JSON Schema');
    expect(build).toThrow(ToolSchemaError);
  });
});

describe("buildRehearsePrompt", () => {
  const history: Message[] = [
    { role: "system", content: "You are a bank agent." },
    { role: "user", content: "Send 5 to Bob and show my balance." },
  ];
  const latestAct = callingTurn("Two calls.", [
    ["c1", "transfer", '{"to":"Bob","amount":5}'],
    ["c2", "get_balance", "{}"],
  ]);
  const request: RehearseRequest = { tools: [transfer], history, latestAct, call: { id: "c2", name: "get_balance", arguments: {} } };

  it("holds the instructions, whitelist, history, latest turn and the call, in that order", () => {
    const [system, user] = buildRehearsePrompt(request);
    expect(system).toEqual({ role: "system", content: DEFAULT_REHEARSE_INSTRUCTIONS });
    expect(user).toEqual({
      role: "user",
      content: [
        "## Available tools",
        '{"name":"transfer","description":"Send money","parameters":{"type":"object","properties":{"to":{"type":"string"},"amount":{"type":"number","exclusiveMinimum":0}},"required":["to","amount"],"additionalProperties":false}}',
        "",
        "## Conversation so far",
        "[system]\nYou are a bank agent.\n\n[user]\nSend 5 to Bob and show my balance.",
        "",
        "## The agent's latest turn",
        '(calls transfer) {"to":"Bob","amount":5}\n(calls get_balance) {}',
        "",
        "## Tool call to simulate",
        '{"name":"get_balance","arguments":{}}',
      ].join("\n"),
    });
  });

  it("switches sections off, replaces the instructions, and adds few-shot examples", () => {
    const messages = buildRehearsePrompt(request, {
      sections: { instructions: "Be the bank API.", tools: false, history: false, latestAct: false },
      examples: [
        { call: { name: "get_balance", arguments: {} }, output: { result: { balance: 12 } } },
        { call: { name: "transfer", arguments: { to: "Eve", amount: 99 } }, output: { error: { code: "INSUFFICIENT_FUNDS", message: "Balance 12 < 99." } } },
      ],
      reasoning: true,
    });
    expect(messages).toEqual([
      { role: "system", content: "Be the bank API." },
      {
        role: "user",
        content: [
          "## Examples",
          'Call: {"name":"get_balance","arguments":{}}\n<execution_result>{"balance":12}</execution_result>',
          "",
          'Call: {"name":"transfer","arguments":{"to":"Eve","amount":99}}\n<execution_result>{"error":{"code":"INSUFFICIENT_FUNDS","message":"Balance 12 < 99."}}</execution_result>',
          "",
          "## Tool call to simulate",
          '{"name":"get_balance","arguments":{}}',
        ].join("\n"),
      },
    ]);
    expect(buildRehearsePrompt(request, { sections: { instructions: false } })).toHaveLength(1);
    expect(buildRehearsePrompt(request, { reasoning: true })[1]!.content).toContain("(reasoning) Two calls.");
  });
});
