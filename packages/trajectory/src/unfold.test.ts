import {
  ContextLengthError,
  Trajectory as TrajectorySchema,
  type Environment,
  type GenerateRequest,
  type Generation,
  type JsonValue,
  type Message,
  type Policy,
  type Task,
  type ToolCall,
  type ToolResult,
  type ToolSpec,
  type Trajectory,
} from "@envace/protocol";
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "@envace/concurrency";
import { unfoldGroup } from "./group.js";
import { conversationOf } from "./messages.js";
import { rehearsal, RehearsalEnvironment } from "./rehearsal-environment.js";
import { rowsOf } from "./rows.js";
import { recordingPolicy, ScriptedPolicy } from "./scripted-policy.js";
import { bankTools as tools, callingTurn, charTokenizer } from "./testing/fixtures.js";
import { unfold } from "./unfold.js";
import { replayReference, simulateUser, singleTurn } from "./user-turns.js";

// A tiny bank (its tools from the shared fixtures): a task with a two-turn reference dialogue, and a real environment.

const system: Message = { role: "system", content: "You are a bank agent." };
const firstUser: Message = { role: "user", content: "Send 5 to Bob, then tell me my balance." };
const secondUser: Message = { role: "user", content: "Thanks! Now send 1 to Eve." };

const task: Task = {
  id: "bank-1",
  messages: [system, firstUser],
  tools,
  reference: [system, firstUser, { role: "assistant", content: "Done, 7 left." }, secondUser, { role: "assistant", content: "Sent." }],
  metadata: {},
};

const asText = (value: JsonValue | undefined): string => (typeof value === "string" ? value : JSON.stringify(value));

class Bank implements Environment {
  balances: Record<string, number> = {};
  calls: ToolCall[] = [];
  reset(): Promise<void> {
    this.balances = { me: 12, Bob: 0, Eve: 0 };
    this.calls = [];
    return Promise.resolve();
  }
  tools(): readonly ToolSpec[] {
    return tools;
  }
  call(call: ToolCall): Promise<ToolResult> {
    this.calls.push(call);
    const base = { callId: call.id, name: call.name };
    if (call.name === "get_balance") {
      return Promise.resolve({ ...base, status: "ok", content: { balance: this.balances[asText(call.arguments.account)] ?? 0 } });
    }
    const amount = Number(call.arguments.amount);
    if (amount > (this.balances.me ?? 0)) {
      return Promise.resolve({ ...base, status: "error", error: { code: "INSUFFICIENT_FUNDS", message: `balance ${this.balances.me} < ${amount}` } });
    }
    this.balances.me = (this.balances.me ?? 0) - amount;
    const to = asText(call.arguments.to);
    this.balances[to] = (this.balances[to] ?? 0) + amount;
    return Promise.resolve({ ...base, status: "ok", content: { ok: true } });
  }
  state(): Promise<JsonValue> {
    return Promise.resolve({ ...this.balances });
  }
}

const call = (name: string, args: Record<string, JsonValue>): string => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const result = (value: unknown): string => `<execution_result>${JSON.stringify(value)}</execution_result>`;

/** A policy whose second request fails with "server down"; the others answer as `generate` does. */
function failsSecond(generate: Policy["generate"]): Policy {
  let calls = 0;
  return {
    id: "failing",
    generate: (request, signal) => {
      calls += 1;
      return calls === 2 ? Promise.reject(new Error("server down")) : generate(request, signal);
    },
  };
}

const generations = (trajectory: Trajectory): Generation[] =>
  trajectory.steps.flatMap((step) =>
    step.type === "act"
      ? [step.generation, ...step.outcomes.flatMap((o) => (o.provenance === "rehearsed" && o.generation !== undefined ? [o.generation] : []))]
      : [],
  );

describe("unfold: a self-unfolded rollout (EnvACE: one policy acts and rehearses)", () => {
  const script = {
    act: [
      `<think>Transfer, then check.</think>\n${call("transfer", { to: "Bob", amount: 5 })}\n${call("get_balance", { account: "me" })}`,
      "Sent 5 to Bob; your balance is 7.",
      call("transfer", { to: "Eve", amount: "one" }),
      call("transfer", { to: "Eve", amount: 100 }),
      "Sorry, you cannot send that much.",
    ],
    rehearse: [
      `<think>A plain transfer.</think>${result({ ok: true })}`,
      result({ balance: 7 }),
      result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 7 < 100" } }),
    ],
  };

  async function run(): Promise<{ trajectory: Trajectory; policy: ReturnType<typeof recordingPolicy> }> {
    const policy = recordingPolicy(ScriptedPolicy.queues("policy", script, { tokenizer: charTokenizer }));
    const trajectory = await unfold({ task, actor: policy, environment: rehearsal(policy) });
    return { trajectory, policy };
  }

  it("alternates Act and Rehearse, replays the reference's next user turn, and stops with the agent", async () => {
    const { trajectory, policy } = await run();
    expect(policy.requests.map((r) => r.role)).toEqual(["act", "rehearse", "rehearse", "act", "act", "act", "rehearse", "act"]);
    expect(trajectory.steps.map((s) => (s.type === "act" ? `act:${s.outcomes.length}` : `user:${s.source}`))).toEqual([
      "act:2",
      "act:0",
      "user:replay",
      "act:1",
      "act:1",
      "act:0",
    ]);
    expect(trajectory.termination).toEqual({ reason: "agent_stop" });
    expect(trajectory.metadata).toEqual({ actor: "policy", environment: "rehearsed", rehearser: "policy" });
    expect(TrajectorySchema.parse(JSON.parse(JSON.stringify(trajectory)))).toEqual(trajectory);
  });

  it("marks every outcome rehearsed; refuses bad arguments without asking the model; lets the model predict a failure", async () => {
    const { trajectory } = await run();
    const outcomes = trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
    expect(outcomes.map((o) => o.provenance)).toEqual(["rehearsed", "rehearsed", "rehearsed", "rehearsed"]);
    expect(outcomes.map((o) => o.result)).toEqual([
      { status: "ok", callId: "call_1_0", name: "transfer", content: { ok: true } },
      { status: "ok", callId: "call_1_1", name: "get_balance", content: { balance: 7 } },
      {
        status: "error",
        callId: "call_3_0",
        name: "transfer",
        error: { code: "INVALID_PARAMETERS", message: 'Invalid parameters for "transfer": arguments/amount must be number.' },
      },
      { status: "error", callId: "call_4_0", name: "transfer", error: { code: "INSUFFICIENT_FUNDS", message: "balance 7 < 100" } },
    ]);
    expect(outcomes.map((o) => o.provenance === "rehearsed" && o.generation !== undefined)).toEqual([true, true, false, true]);
  });

  it("simulates parallel calls in order, each from the same history", async () => {
    const { policy } = await run();
    const [first, second] = policy.requests.filter((r) => r.role === "rehearse").map((r) => r.messages[1]!.content);
    const head = (text: string | null | undefined): string => (text ?? "").split("## Tool call to simulate")[0]!;
    expect(head(first)).toBe(head(second));
    expect(first).toContain('## Tool call to simulate\n{"name":"transfer","arguments":{"to":"Bob","amount":5}}');
    expect(second).toContain('## Tool call to simulate\n{"name":"get_balance","arguments":{"account":"me"}}');
    expect(head(first)).not.toContain("[tool result");
  });

  it("shows the agent each result, real or predicted, as a tool message", async () => {
    const { policy } = await run();
    const secondAct = policy.requests.filter((r) => r.role === "act")[1]!;
    expect(secondAct.messages.slice(2)).toEqual([
      callingTurn("Transfer, then check.", [
        ["call_1_0", "transfer", '{"to":"Bob","amount":5}'],
        ["call_1_1", "get_balance", '{"account":"me"}'],
      ]),
      { role: "tool", tool_call_id: "call_1_0", name: "transfer", content: '{"ok":true}' },
      { role: "tool", tool_call_id: "call_1_1", name: "get_balance", content: '{"balance":7}' },
    ]);
    expect(secondAct.tools).toEqual(tools);
    expect(secondAct.sampling).toMatchObject({ temperature: 1, topP: 1, maxTokens: 8192 });
  });

  it("turns every generation into a training row, in order", async () => {
    const { trajectory } = await run();
    const rows = rowsOf(trajectory);
    expect(rows.map((r) => r.role)).toEqual(["act", "rehearse", "rehearse", "act", "act", "act", "rehearse", "act"]);
    const gens = generations(trajectory);
    rows.forEach((row, i) => {
      expect(row).toMatchObject({ index: i, invalid: false, taskId: "bank-1", trajectoryId: "bank-1/0", rollout: 0 });
      expect(row.outputTokens).toEqual(charTokenizer.encode(gens[i]!.text));
      expect(row.promptTokens).toEqual(gens[i]!.promptTokens);
      expect(row.logprobs).toHaveLength(row.outputTokens.length);
    });
    expect(rowsOf(trajectory, { roles: ["act"] }).map((r) => r.index)).toEqual([0, 3, 4, 5, 7]);
  });
});

describe("unfold: a grounded rollout against a real environment", () => {
  it("records grounded outcomes, and a malformed Act output ends it with a typed code and an invalid row", async () => {
    const policy = recordingPolicy(
      ScriptedPolicy.queues(
        "policy",
        {
          act: [
            call("get_balance", { account: "me" }),
            call("transfer", { to: "Bob", amount: 20 }),
            call("transfer", { to: "Bob", amount: 5 }),
            '<tool_call>{"name": "get_balance", "arguments": {"account": "me"</tool_call>',
          ],
        },
        { tokenizer: charTokenizer },
      ),
    );
    const bank = new Bank();
    const trajectory = await unfold({ task, actor: policy, environment: bank });

    expect(policy.requests.map((r) => r.role)).toEqual(["act", "act", "act", "act"]);
    const outcomes = trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
    expect(outcomes).toEqual([
      {
        provenance: "grounded",
        call: { id: "call_1_0", name: "get_balance", arguments: { account: "me" } },
        result: { status: "ok", callId: "call_1_0", name: "get_balance", content: { balance: 12 } },
      },
      {
        provenance: "grounded",
        call: { id: "call_2_0", name: "transfer", arguments: { to: "Bob", amount: 20 } },
        result: { status: "error", callId: "call_2_0", name: "transfer", error: { code: "INSUFFICIENT_FUNDS", message: "balance 12 < 20" } },
      },
      {
        provenance: "grounded",
        call: { id: "call_3_0", name: "transfer", arguments: { to: "Bob", amount: 5 } },
        result: { status: "ok", callId: "call_3_0", name: "transfer", content: { ok: true } },
      },
    ]);
    expect(trajectory.termination).toMatchObject({ reason: "parse_error", code: "JSON_DECODE_ERROR" });
    expect(rowsOf(trajectory).map((r) => [r.role, r.invalid])).toEqual([
      ["act", false],
      ["act", false],
      ["act", false],
      ["act", true],
    ]);
    expect(trajectory.metadata).toEqual({ actor: "policy", environment: "grounded" });
    expect(await bank.state()).toEqual({ me: 7, Bob: 5, Eve: 0 });
    // The agent saw the real error in the same envelope a rehearsed error uses.
    expect(policy.requests[2]!.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_2_0",
      name: "transfer",
      content: '{"error":{"code":"INSUFFICIENT_FUNDS","message":"balance 12 < 20"}}',
    });
  });

  it("ends with env_error when the real environment throws", async () => {
    const bank = new Bank();
    bank.call = () => Promise.reject(new Error("connection reset"));
    const policy = ScriptedPolicy.queues("p", { act: [call("get_balance", { account: "me" })] });
    const trajectory = await unfold({ task, actor: policy, environment: bank });
    expect(trajectory.termination).toEqual({ reason: "env_error", code: "ENVIRONMENT_EXCEPTION", detail: "get_balance: connection reset" });
  });
});

describe("unfold: the real environment is released on every path", () => {
  /** A bank that counts finished `close` calls (each takes a moment, as stopping a process does). */
  class ClosingBank extends Bank {
    closed = 0;
    async close(): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, 5));
      this.closed += 1;
    }
  }
  const transfer = call("transfer", { to: "Bob", amount: 5 });

  it("closes once when the agent stops, and the final state stays readable", async () => {
    const bank = new ClosingBank();
    const policy = ScriptedPolicy.queues("p", { act: [transfer, "Done."] });
    await unfold({ task, actor: policy, environment: bank, users: singleTurn });
    expect(bank.closed).toBe(1);
    expect(await bank.state()).toEqual({ me: 7, Bob: 5, Eve: 0 });
  });

  it("closes when the policy fails, when the rollout is cancelled, and when reset throws", async () => {
    const failing = new ClosingBank();
    const down: Policy = { id: "down", generate: () => Promise.reject(new Error("server down")) };
    await expect(unfold({ task, actor: down, environment: failing })).rejects.toThrow("server down");
    expect(failing.closed).toBe(1);

    const cancelled = new ClosingBank();
    const controller = new AbortController();
    const policy = new ScriptedPolicy("p", () => {
      controller.abort(new Error("stop now"));
      return transfer;
    });
    await expect(unfold({ task, actor: policy, environment: cancelled, signal: controller.signal })).rejects.toThrow("stop now");
    expect(cancelled.closed).toBe(1);

    const broken = new ClosingBank();
    broken.reset = () => Promise.reject(new Error("cannot start"));
    await expect(unfold({ task, actor: down, environment: broken })).rejects.toThrow("cannot start");
    expect(broken.closed).toBe(1);
  });

  it("closes every rollout's environment of a group, the cancelled siblings' too", async () => {
    const banks: ClosingBank[] = [];
    const failing = failsSecond(
      (_request, signal) => new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason as Error))),
    );
    const environment = (): ClosingBank => {
      const bank = new ClosingBank();
      banks.push(bank);
      return bank;
    };
    await expect(unfoldGroup({ task, size: 3, actor: failing, environment, users: singleTurn })).rejects.toThrow("server down");
    expect(banks.map((b) => b.closed)).toEqual([1, 1, 1]);
  });
});

describe("unfold: limits and endings", () => {
  const looping = (): ScriptedPolicy =>
    new ScriptedPolicy("loop", (request) => (request.role === "act" ? call("get_balance", { account: "me" }) : result({ balance: 1 })));

  it("stops at maxTurns Act generations", async () => {
    const trajectory = await unfold({ task, actor: looping(), environment: new Bank(), limits: { maxTurns: 3 } });
    expect(trajectory.steps).toHaveLength(3);
    expect(trajectory.termination).toEqual({ reason: "max_turns", limit: 3 });
  });

  it("stops when an Act output hits its token limit, and clips maxTokens to the response limit", async () => {
    const policy = recordingPolicy(ScriptedPolicy.queues("p", { act: [{ text: "<think>long", finishReason: "length" }] }));
    const trajectory = await unfold({
      task,
      actor: policy,
      environment: new Bank(),
      limits: { maxResponseTokens: 64 },
      sampling: { act: { maxTokens: 1000 } },
    });
    expect(policy.requests[0]!.sampling.maxTokens).toBe(64);
    expect(trajectory.termination).toEqual({ reason: "max_tokens", limit: 64, detail: "act response" });
    expect(rowsOf(trajectory).map((r) => r.invalid)).toEqual([false]);
  });

  it("stops when a prompt grows past maxPromptTokens", async () => {
    const policy = new ScriptedPolicy("p", () => call("get_balance", { account: "me" }), { tokenizer: charTokenizer });
    const trajectory = await unfold({ task, actor: policy, environment: new Bank(), limits: { maxPromptTokens: 200 } });
    expect(trajectory.termination).toMatchObject({ reason: "max_tokens", limit: 200 });
    expect((trajectory.termination as { detail: string }).detail).toMatch(/^act prompt of \d+ tokens$/);
  });

  it("ends with max_tokens, not a failure, when a model says a prompt overflows its context", async () => {
    const overflowing = (role: GenerateRequest["role"]): ScriptedPolicy =>
      new ScriptedPolicy("p", (request) => {
        if (request.role === role) throw new ContextLengthError(600, 512);
        return request.role === "act" ? call("get_balance", { account: "me" }) : result({ balance: 1 });
      });
    const act = await unfold({ task, actor: overflowing("act"), environment: new Bank() });
    expect(act.termination).toEqual({ reason: "max_tokens", limit: 12288, detail: "act prompt of 600 tokens" });
    expect(act.steps).toEqual([]);
    const policy = overflowing("rehearse");
    const rehearse = await unfold({ task, actor: policy, environment: rehearsal(policy) });
    expect(rehearse.termination).toEqual({ reason: "max_tokens", limit: 12288, detail: "rehearse prompt of 600 tokens" });
    expect(rowsOf(rehearse).map((r) => r.role)).toEqual(["act"]);
  });

  it("stops after maxToolErrors tool errors", async () => {
    const policy = new ScriptedPolicy("p", () => call("transfer", { to: "Bob", amount: 1000 }));
    const trajectory = await unfold({ task, actor: policy, environment: new Bank(), limits: { maxToolErrors: 2 } });
    expect(trajectory.steps).toHaveLength(2);
    expect(trajectory.termination).toEqual({ reason: "tool_error", count: 2 });
  });

  it("ends with env_error when a Rehearse output cannot be read, and marks that row invalid", async () => {
    const policy = ScriptedPolicy.queues(
      "p",
      { act: [call("get_balance", { account: "me" })], rehearse: ["The balance is 12."] },
      { tokenizer: charTokenizer },
    );
    const trajectory = await unfold({ task, actor: policy, environment: rehearsal(policy) });
    expect(trajectory.termination).toMatchObject({ reason: "env_error", code: "NO_EXECUTION_RESULT" });
    expect(rowsOf(trajectory).map((r) => [r.role, r.invalid])).toEqual([
      ["act", false],
      ["rehearse", true],
    ]);
  });

  it("ends with the agent's first reply when no user turns follow", async () => {
    const policy = ScriptedPolicy.queues("p", { act: ["Hello."] });
    const trajectory = await unfold({ task, actor: policy, environment: new Bank(), users: singleTurn });
    expect(trajectory.termination).toEqual({ reason: "agent_stop" });
    expect(trajectory.steps).toHaveLength(1);
  });

  it("masks the reward of a rollout whose next user turn could not be gated (a judge failure), never scoring it", async () => {
    const gated = (decision: boolean | { masked: string }) =>
      unfold({
        task,
        actor: ScriptedPolicy.queues("p", { act: ["Hello.", "Bye."] }),
        environment: new Bank(),
        users: replayReference({ gate: () => decision }),
      });
    const masked = await gated({ masked: "judge down" });
    expect(masked.termination).toEqual({ reason: "agent_stop" });
    expect(masked.reward).toEqual({ status: "masked", reason: "judge down" });
    expect(TrajectorySchema.parse(masked).reward).toEqual({ status: "masked", reason: "judge down" });
    const refused = await gated(false);
    expect(refused.reward).toBeUndefined();
    expect((await gated(true)).steps.filter((s) => s.type === "user")).toHaveLength(1);
  });

  it("rejects when cancelled", async () => {
    const controller = new AbortController();
    const policy = new ScriptedPolicy("p", () => {
      controller.abort(new Error("stop now"));
      return call("get_balance", { account: "me" });
    });
    await expect(unfold({ task, actor: policy, environment: new Bank(), signal: controller.signal })).rejects.toThrow("stop now");
  });
});

describe("unfold: a simulated user", () => {
  it("replies through the user role until the user writes a stop marker; its generations are not training rows", async () => {
    const actor = recordingPolicy(ScriptedPolicy.queues("agent", { act: ["Hi! What can I do?", "Done: sent 5 to Bob."] }, { tokenizer: charTokenizer }));
    const user = recordingPolicy(
      ScriptedPolicy.queues("user-sim", { user: ["Send 5 to Bob please.", "Great, thanks. ###STOP###"] }, { tokenizer: charTokenizer }),
    );
    const trajectory = await unfold({
      task: { ...task, metadata: { user_scenario: "You want to send 5 to Bob." } },
      actor,
      environment: new Bank(),
      users: simulateUser({ policy: user }),
    });
    expect(trajectory.steps.map((s) => s.type)).toEqual(["act", "user", "act", "user"]);
    expect(trajectory.termination).toEqual({ reason: "user_stop", marker: "###STOP###" });
    expect(rowsOf(trajectory).map((r) => r.role)).toEqual(["act", "act"]);
    // The simulator sees the dialogue from the user's side.
    expect(user.requests[1]!.messages.slice(1)).toEqual([
      { role: "assistant", content: firstUser.content },
      { role: "user", content: "Hi! What can I do?" },
      { role: "assistant", content: "Send 5 to Bob please." },
      { role: "user", content: "Done: sent 5 to Bob." },
    ]);
    expect(user.requests[0]!.messages[0]!.content).toContain("## Scenario\nYou want to send 5 to Bob.");
    expect(conversationOf(trajectory).at(-1)).toEqual({ role: "user", content: "Great, thanks. ###STOP###" });
  });
});

describe("unfold: separate acting and rehearsing policies", () => {
  it("asks the rehearsal policy for results (the caller-only baseline), and training keeps only the actor's rows", async () => {
    const actor = recordingPolicy(ScriptedPolicy.queues("actor", { act: [call("get_balance", { account: "me" }), "You have 3."] }));
    const simulator = recordingPolicy(ScriptedPolicy.queues("frozen-simulator", { rehearse: [result({ balance: 3 })] }));
    const trajectory = await unfold({ task, actor, environment: rehearsal(simulator), users: singleTurn });
    expect(actor.requests.map((r) => r.role)).toEqual(["act", "act"]);
    expect(simulator.requests.map((r) => r.role)).toEqual(["rehearse"]);
    expect(trajectory.metadata).toEqual({ actor: "actor", environment: "rehearsed", rehearser: "frozen-simulator" });
    expect(rowsOf(trajectory, { roles: ["act"] }).map((r) => r.index)).toEqual([0, 2]);
  });
});

describe("unfoldGroup", () => {
  /** A policy that answers after `delay` ms and records how many generations ran at once. */
  function slow(delay: number): Policy & { peak: number } {
    let active = 0;
    const state = {
      id: "slow",
      peak: 0,
      async generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
        active += 1;
        state.peak = Math.max(state.peak, active);
        try {
          await new Promise((resolve, reject) => {
            const timer = setTimeout(resolve, delay);
            signal?.addEventListener("abort", () => {
              clearTimeout(timer);
              reject(signal.reason as Error);
            });
          });
        } finally {
          active -= 1;
        }
        const text = request.role === "act" ? "All done." : result({});
        return { role: request.role, text, promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" };
      },
    };
    return state;
  }

  it("runs G rollouts under a global cap and returns them in rollout order", async () => {
    const policy = slow(5);
    const limit = new ConcurrencyLimit(3);
    const groups = await Promise.all(
      ["a", "b"].map((id) => unfoldGroup({ task: { ...task, id }, size: 4, actor: policy, environment: () => new Bank(), users: singleTurn, limit })),
    );
    expect(groups.flat().map((t) => t.id)).toEqual(["a/0", "a/1", "a/2", "a/3", "b/0", "b/1", "b/2", "b/3"]);
    expect(policy.peak).toBe(3);
    expect(limit.active).toBe(0);
  });

  it("gives every rollout its own environment from a factory", async () => {
    const banks: Bank[] = [];
    const policy = new ScriptedPolicy("p", (request) => (request.messages.at(-1)?.role === "tool" ? "Done." : call("transfer", { to: "Bob", amount: 5 })));
    await unfoldGroup({
      task,
      size: 3,
      actor: policy,
      users: singleTurn,
      environment: () => {
        const bank = new Bank();
        banks.push(bank);
        return bank;
      },
    });
    expect(await Promise.all(banks.map((b) => b.state()))).toEqual([0, 1, 2].map(() => ({ me: 7, Bob: 5, Eve: 0 })));
  });

  it("cancels every rollout when the signal aborts, waiting ones included", async () => {
    const controller = new AbortController();
    const limit = new ConcurrencyLimit(1);
    const pending = unfoldGroup({ task, size: 3, actor: slow(1000), environment: new Bank(), users: singleTurn, limit, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("cancelled by user")), 10);
    await expect(pending).rejects.toThrow("cancelled by user");
    expect(limit.active).toBe(0);
    expect(limit.pending).toBe(0);
  });

  it("cancels the other rollouts when one fails", async () => {
    const failing = failsSecond((request, signal) => slow(1000).generate(request, signal));
    await expect(unfoldGroup({ task, size: 3, actor: failing, environment: () => new Bank(), users: singleTurn })).rejects.toThrow("server down");
  });

  it("stops siblings whose policy ignores the signal at their next step, and leaves no listener on the caller's signal", async () => {
    const controller = new AbortController();
    let generations = 0;
    // Answers at once, ignoring the signal: only the engine's own checks can stop it.
    const deaf: Policy = {
      id: "deaf",
      generate: async (request) => {
        generations += 1;
        const failing = generations === 5;
        await Promise.resolve();
        if (failing) throw new Error("server down");
        return { role: request.role, text: call("get_balance", { account: "me" }), promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" };
      },
    };
    const group = unfoldGroup({ task, size: 3, actor: deaf, environment: () => new Bank(), limits: { maxTurns: 1000 }, signal: controller.signal });
    await expect(group).rejects.toThrow("server down");
    expect(generations).toBeLessThan(10);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    await unfold({ task, actor: ScriptedPolicy.queues("p", { act: ["Hello."] }), environment: new Bank(), users: singleTurn, signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("runs a large group under a tight cap without Node's listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    try {
      await unfoldGroup({ task, size: 16, actor: slow(2), environment: () => new Bank(), users: singleTurn, limit: new ConcurrencyLimit(2) });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it("validates its arguments", async () => {
    expect(() => new ConcurrencyLimit(0)).toThrow("positive integer");
    await expect(unfoldGroup({ task, size: 0, actor: slow(1), environment: new Bank() })).rejects.toThrow("positive integer");
  });
});

describe("RehearsalEnvironment", () => {
  it("takes the task's tools as its whitelist and few-shot examples per task", async () => {
    const policy = recordingPolicy(ScriptedPolicy.queues("p", { rehearse: [result({ balance: 1 })] }));
    const env = new RehearsalEnvironment({
      policy,
      examples: (t) => [{ call: { name: "get_balance", arguments: { account: t.id } }, output: { result: { balance: 0 } } }],
    });
    env.reset(task);
    expect(env.tools()).toEqual(tools);
    const latestAct = { role: "assistant" as const, content: "" };
    const answer = await env.rehearse(
      { id: "c", name: "get_balance", arguments: { account: "me" } },
      { history: task.messages, latestAct },
      { temperature: 1, topP: 1, topK: 0, maxTokens: 10, stop: [] },
    );
    expect(answer).toMatchObject({ kind: "rehearsed", result: { status: "ok", content: { balance: 1 } } });
    expect(policy.requests[0]!.messages[1]!.content).toContain('Call: {"name":"get_balance","arguments":{"account":"bank-1"}}');
    const refused = await env.rehearse({ id: "d", name: "wire_money", arguments: {} }, { history: [], latestAct }, policy.requests[0]!.sampling);
    expect(refused).toEqual({
      kind: "rejected",
      result: {
        status: "error",
        callId: "d",
        name: "wire_money",
        error: { code: "TOOL_NOT_AVAILABLE", message: 'Tool "wire_money" is not available. Available tools: get_balance, transfer.' },
      },
    });
    expect(policy.requests).toHaveLength(1);
  });
});
