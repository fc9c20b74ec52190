// What several of the package's tests share: a tiny bank's tools, an exact tokenizer, a policy
// wrapper that keeps its requests, and the text a parser's fuzz test feeds it.
import type { GenerateRequest, Policy, Tokenizer, ToolSpec } from "@envace/protocol";
import fc from "fast-check";

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

/** Records every request a policy receives. */
export function recording(policy: Policy): Policy & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    id: policy.id,
    requests,
    generate(request, signal) {
      requests.push(request);
      return policy.generate(request, signal);
    },
  };
}

/** Strings built from a parser's own tags and tokens mixed with random text: what trips a parser up. */
export function adversarialText(fragments: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.array(fc.oneof(fragments, fc.string({ maxLength: 8 })), { maxLength: 40 }).map((parts) => parts.join(""));
}
