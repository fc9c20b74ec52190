// What several of the package's tests share: a tiny bank's tools, an exact tokenizer, and the
// text a parser's fuzz test feeds it.
import type { AssistantMessage, Tokenizer, ToolSpec } from "@envace/protocol";
import fc from "fast-check";
import { expect } from "vitest";

/** A bank's two tools; the Qwen3 template test pins their rendering, so change them with it. */
export const bankTools: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_balance",
      description: "Balance of an account",
      parameters: { type: "object", properties: { account: { type: "string" } }, required: ["account"] },
    },
  },
  {
    type: "function",
    function: {
      name: "transfer",
      description: "Send money",
      parameters: {
        type: "object",
        properties: { to: { type: "string" }, amount: { type: "number" } },
        required: ["to", "amount"],
      },
    },
  },
];

/** One token per UTF-16 code unit: enough to give every generation real, checkable token ids. */
export const charTokenizer: Tokenizer = {
  vocabSize: 65536,
  stopTokenIds: [],
  encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

/** An assistant turn that only calls tools, as the wire carries it: each call's arguments as JSON text. */
export function callingTurn(reasoning: string, calls: readonly [id: string, name: string, args: string][]): AssistantMessage {
  return {
    role: "assistant",
    content: "",
    reasoning_content: reasoning,
    tool_calls: calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } })),
  };
}

/** A parser's error result: one of the codes it documents, and a detail that says what went wrong. */
export function expectParseError(output: { code: string; detail: string }, codes: readonly string[]): void {
  expect(codes).toContain(output.code);
  expect(output.detail.length).toBeGreaterThan(0);
}

/** Strings built from a parser's own tags and tokens mixed with random text: what trips a parser up. */
export function adversarialText(fragments: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.array(fc.oneof(fragments, fc.string({ maxLength: 8 })), { maxLength: 40 }).map((parts) => parts.join(""));
}
