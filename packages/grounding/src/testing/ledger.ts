// Hand-built trajectories and a small real environment (a ledger of accounts) for the tests.
import type { ActStep, Environment, Generation, JsonObject, JsonValue, Task, Termination, ToolCall, ToolResult, Trajectory } from "@envace/protocol";

export const TASK: Task = {
  id: "ledger-1",
  messages: [{ role: "user", content: "Open an account and deposit 5." }],
  tools: ["open_account", "deposit", "balance"].map((name) => ({ type: "function" as const, function: { name, parameters: { type: "object" } } })),
  metadata: {},
};

export function generation(role: "act" | "rehearse", text: string, logprobs: number[] | null = [-0.5], promptTokens: number[] = [1, 2, 3]): Generation {
  return { role, text, promptTokens, outputTokens: (logprobs ?? [0]).map((_, i) => 100 + i), logprobs, finishReason: "stop" };
}

export const ok = (call: ToolCall, content: JsonValue): ToolResult => ({ status: "ok", callId: call.id, name: call.name, content });
export const fail = (call: ToolCall, code: string, message = ""): ToolResult => ({
  status: "error",
  callId: call.id,
  name: call.name,
  error: { code, message },
});

/** One call of a hand-built Act step: the imagined answer, and how it came (a model answer with these log-probabilities, or the validator's refusal). */
export interface CallSpec {
  name: string;
  arguments?: JsonObject;
  answer: (call: ToolCall) => ToolResult;
  logprobs?: number[] | null;
  refused?: boolean;
}

let ids = 0;

/** A self-unfolded trajectory: one Act step per entry (a list of calls, or a reply), ending as `termination` says. */
export function trajectory(id: string, steps: (CallSpec[] | "reply")[], termination: Termination = { reason: "agent_stop" }, rollout = 0): Trajectory {
  const built: ActStep[] = steps.map((spec) => {
    if (spec === "reply") return { type: "act", generation: generation("act", "done"), message: { role: "assistant", content: "done" }, outcomes: [] };
    const calls = spec.map((c) => ({ id: `call-${++ids}`, name: c.name, arguments: c.arguments ?? {} }));
    return {
      type: "act",
      generation: generation("act", "<tool_call>…</tool_call>"),
      message: {
        role: "assistant",
        content: "",
        tool_calls: calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
      },
      outcomes: calls.map((call, i) => {
        const c = spec[i]!;
        const result = c.answer(call);
        return c.refused === true
          ? { provenance: "rehearsed" as const, call, result }
          : {
              provenance: "rehearsed" as const,
              call,
              result,
              generation: generation("rehearse", JSON.stringify(result), c.logprobs === undefined ? [-0.5] : c.logprobs),
            };
      }),
    };
  });
  return { id, taskId: TASK.id, rollout, context: TASK.messages, steps: built, termination, metadata: {} };
}

/**
 * The real ledger: `open_account` gives ids A1, A2, …; `deposit {id, amount}` and `balance {id}`
 * answer NOT_FOUND for an unknown id. `log` records every call that reaches it; `closed` counts closes.
 */
export class Ledger implements Environment {
  readonly log: string[] = [];
  closed = 0;
  #accounts = new Map<string, number>();
  readonly #throwOn: string | undefined;

  constructor(throwOn?: string) {
    this.#throwOn = throwOn;
  }

  reset(): Promise<void> {
    this.#accounts = new Map();
    return Promise.resolve();
  }

  tools(): Task["tools"] {
    return TASK.tools;
  }

  call(call: ToolCall): Promise<ToolResult> {
    this.log.push(`${call.name} ${JSON.stringify(call.arguments)}`);
    if (call.name === this.#throwOn) return Promise.reject(new Error(`${call.name}: connection reset`));
    if (call.name === "open_account") {
      const id = `A${this.#accounts.size + 1}`;
      this.#accounts.set(id, 0);
      return Promise.resolve(ok(call, { id }));
    }
    const id = typeof call.arguments.id === "string" ? call.arguments.id : JSON.stringify(call.arguments.id);
    const balance = this.#accounts.get(id);
    if (balance === undefined) return Promise.resolve(fail(call, "NOT_FOUND", `no account ${id}`));
    if (call.name === "deposit") {
      const next = balance + Number(call.arguments.amount);
      this.#accounts.set(id, next);
      return Promise.resolve(ok(call, { balance: next }));
    }
    return Promise.resolve(ok(call, { balance }));
  }

  state(): Promise<JsonValue> {
    return Promise.resolve(Object.fromEntries(this.#accounts));
  }

  close(): Promise<void> {
    this.closed += 1;
    return Promise.resolve();
  }
}
