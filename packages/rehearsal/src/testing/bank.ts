// A tiny bank for the tests: tools, a task, a real environment that records every call, and
// helpers to script a policy.
import type { Environment, GenerateRequest, JsonObject, JsonValue, Policy, Task, Tokenizer, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { recordingPolicy } from "@envace/trajectory";

export const tools: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "balance",
      parameters: { type: "object", properties: { account: { type: "string" } }, required: ["account"], additionalProperties: false },
    },
  },
  {
    type: "function",
    function: {
      name: "transfer",
      parameters: {
        type: "object",
        properties: { to: { type: "string" }, amount: { type: "integer", minimum: 1 } },
        required: ["to", "amount"],
        additionalProperties: false,
      },
    },
  },
];

export const task: Task = {
  id: "bank-1",
  messages: [
    { role: "system", content: "You are a bank agent. Check the balance before you transfer." },
    { role: "user", content: "Send 500 to Bob." },
  ],
  tools,
  metadata: {},
};

/** Everything that happened, in order, across the policy and the environment. */
export type LogEntry = { who: "policy"; role: string } | { who: "env"; what: "reset" | "call" | "state"; call?: ToolCall };

const text = (value: JsonValue | undefined): string => (typeof value === "string" ? value : JSON.stringify(value));

/** The real bank. Every reset, call and state read is logged. */
export class RecordingBank implements Environment {
  balances = Object.create(null) as Record<string, number>;
  readonly calls: ToolCall[] = [];
  resets = 0;
  constructor(readonly log: LogEntry[] = []) {}

  reset(): Promise<void> {
    this.resets += 1;
    this.log.push({ who: "env", what: "reset" });
    this.balances = Object.assign(Object.create(null) as Record<string, number>, { me: 120, Bob: 0 });
    return Promise.resolve();
  }
  tools(): readonly ToolSpec[] {
    return tools;
  }
  call(call: ToolCall): Promise<ToolResult> {
    this.calls.push(call);
    this.log.push({ who: "env", what: "call", call });
    const base = { callId: call.id, name: call.name };
    if (call.name === "balance") {
      return Promise.resolve({
        ...base,
        status: "ok",
        content: { account: call.arguments.account ?? null, balance: this.balances[text(call.arguments.account)] ?? 0 },
      });
    }
    const amount = Number(call.arguments.amount);
    const me = this.balances.me ?? 0;
    if (amount > me) return Promise.resolve({ ...base, status: "error", error: { code: "INSUFFICIENT_FUNDS", message: `balance ${me} < ${amount}` } });
    this.balances.me = me - amount;
    const to = text(call.arguments.to);
    this.balances[to] = (this.balances[to] ?? 0) + amount;
    return Promise.resolve({ ...base, status: "ok", content: { ok: true, balance: this.balances.me } });
  }
  state(): Promise<JsonValue> {
    this.log.push({ who: "env", what: "state" });
    return Promise.resolve({ ...this.balances });
  }
}

export const call = (name: string, args: JsonObject): string => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
export const result = (value: JsonValue): string => `<execution_result>${JSON.stringify(value)}</execution_result>`;
export const assessment = (value: JsonValue): string => `<assessment>${JSON.stringify(value)}</assessment>`;
export const memory = (value: JsonValue): string => `<memory>${JSON.stringify(value)}</memory>`;

/** Records every request a policy receives (and logs its role). */
export function recording(policy: Policy, log: LogEntry[] = []): Policy & { requests: GenerateRequest[] } {
  return recordingPolicy(policy, (request) => log.push({ who: "policy", role: request.role }));
}

/** One token per UTF-16 code unit: exact, checkable counts. */
export const charTokenizer: Tokenizer = {
  vocabSize: 65536,
  stopTokenIds: [],
  encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

/** The text of the system message of a request (the first message). */
export function systemOf(request: GenerateRequest): string {
  const first = request.messages[0];
  return first?.role === "system" ? first.content : "";
}

/** The text of the last message of a request. */
export function lastOf(request: GenerateRequest): string {
  const last = request.messages.at(-1);
  return last?.content ?? "";
}
