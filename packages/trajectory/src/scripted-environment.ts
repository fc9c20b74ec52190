import type { Environment, JsonValue, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";

/**
 * An environment that answers every call from a script instead of running a tool, and keeps the
 * calls it was given: for tests, demos and benchmarks of the machinery around an environment, as
 * `ScriptedPolicy` is for a policy. Every answer is an ok result; its state is null.
 */
export class ScriptedEnvironment implements Environment {
  /** Every call it was given, in order. */
  readonly calls: ToolCall[] = [];
  readonly #tools: readonly ToolSpec[];
  readonly #answer: (call: ToolCall) => JsonValue;

  constructor(tools: readonly ToolSpec[], answer: (call: ToolCall) => JsonValue) {
    this.#tools = tools;
    this.#answer = answer;
  }

  reset(): Promise<void> {
    return Promise.resolve();
  }

  tools(): readonly ToolSpec[] {
    return this.#tools;
  }

  call(call: ToolCall): Promise<ToolResult> {
    this.calls.push(call);
    return Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: this.#answer(call) });
  }

  state(): Promise<JsonValue> {
    return Promise.resolve(null);
  }
}
