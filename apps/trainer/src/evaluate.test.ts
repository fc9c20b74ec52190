import { BuiltinEnvironment, generateTasks, goldTrajectory, outcomeReward, WRITE_TOOLS } from "@envace/bench-builtin";
import type { GenerateRequest, JsonObject, Policy, Task, Tokenizer, ToolResult } from "@envace/protocol";
import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { evaluate, EvaluationEntry, type EvaluateOptions } from "./evaluate.js";

/** One token per UTF-16 code unit: exact, checkable token counts. */
const charTokenizer: Tokenizer = {
  vocabSize: 65536,
  stopTokenIds: [],
  encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

// Held-out tasks of the built-in shop whose instructions are unique, so a scripted policy can tell them apart.
const tasks: Task[] = [];
for (const task of generateTasks({ seed: 11, count: 40, split: "test" })) {
  const instruction = task.messages.at(-1)?.content;
  if (tasks.length < 8 && !tasks.some((t) => t.messages.at(-1)?.content === instruction)) tasks.push(task);
}

interface Gold {
  acts: string[];
  results: Map<string, ToolResult>;
}
const gold = new Map<string, Gold>(
  tasks.map((task) => {
    const steps = goldTrajectory(task).trajectory.steps.flatMap((s) => (s.type === "act" ? [s] : []));
    const results = new Map(steps.flatMap((s) => s.outcomes.map((o) => [key(o.call.name, o.call.arguments), o.result] as const)));
    return [task.messages.at(-1)!.content ?? "", { acts: steps.map((s) => s.generation.text), results }];
  }),
);

function key(name: string, args: JsonObject): string {
  return `${name} ${JSON.stringify(Object.entries(args).sort(([a], [b]) => a.localeCompare(b)))}`;
}

/** The task of a request: its user message (Act), or the user turn in the flattened conversation (Rehearse). */
function goldOf(request: GenerateRequest): Gold {
  const text = request.messages.map((m) => (m.role === "user" && request.role === "act" ? `[user]\n${m.content}` : (m.content ?? ""))).join("\n");
  const found = [...gold.entries()].find(([instruction]) => text.includes(`[user]\n${instruction}`));
  if (found === undefined) throw new Error("unknown task");
  return found[1];
}

type Rehearser = (name: string, real: ToolResult) => string;
const perfect: Rehearser = (_name, real) =>
  `<execution_result>${JSON.stringify(real.status === "ok" ? real.content : { error: real.error })}</execution_result>`;
/** Knows users and writes; gets item values wrong (right keys) and believes every order is missing. */
const flawed: Rehearser = (name, real) => {
  if (name === "item") return '<execution_result>{"price":0,"stock":0,"locked":false}</execution_result>';
  if (name === "order") return '<execution_result>{"error":{"code":"NOT_FOUND","message":"no such order"}}</execution_result>';
  return perfect(name, real);
};

/** Acts as the gold solution; rehearses with `rehearser`; reflects and summarises in the expected formats. */
function goldPolicy(rehearser: Rehearser, options: { failOn?: string } = {}): ScriptedPolicy {
  return new ScriptedPolicy(
    "gold",
    (request) => {
      switch (request.role) {
        case "act": {
          const g = goldOf(request);
          if (options.failOn !== undefined && request.messages.some((m) => m.content === options.failOn)) throw new Error("server down");
          const turn = request.messages.filter((m) => m.role === "assistant").length;
          return g.acts[turn] ?? "Done.";
        }
        case "rehearse": {
          const g = goldOf(request);
          const simulated = JSON.parse((request.messages.at(-1)?.content ?? "").split("## Tool call to simulate\n")[1]!) as {
            name: string;
            arguments: JsonObject;
          };
          const real = g.results.get(key(simulated.name, simulated.arguments));
          if (real === undefined) throw new Error("not a gold call");
          return rehearser(simulated.name, real);
        }
        case "reflect":
          return '<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment>';
        default:
          return '<memory>{"plan": "Do it as rehearsed.", "lessons": ["Look everything up first."]}</memory>';
      }
    },
    { tokenizer: charTokenizer },
  );
}

/** The gold policy, recording the system message of every request in `role`. */
function systemsOf(role: GenerateRequest["role"]): { policy: Policy; systems: string[] } {
  const inner = goldPolicy(perfect);
  const systems: string[] = [];
  const policy: Policy = {
    id: inner.id,
    generate(request, signal) {
      if (request.role === role) systems.push(request.messages[0]?.content ?? "");
      return inner.generate(request, signal);
    },
  };
  return { policy, systems };
}

/** `evaluate` on the built-in shop: every task (unless `tasks` says otherwise), a fresh real environment each, outcome reward. */
const evaluateShop = (options: Omit<EvaluateOptions, "tasks" | "environment" | "reward"> & Partial<EvaluateOptions>) =>
  evaluate({ tasks, environment: () => new BuiltinEnvironment(), reward: outcomeReward, ...options });

const goldCalls = (tool: string): number => tasks.reduce((n, t) => n + (t.goldActions ?? []).filter((c) => c.name === tool).length, 0);

describe("evaluate: the built-in shop against its real environment", () => {
  it("scores a gold policy without rehearsal: every task solved, every gold call made once", async () => {
    const result = await evaluateShop({
      policy: goldPolicy(perfect),
      tokenizer: charTokenizer,
    });
    expect(result).toMatchObject({
      setting: "none",
      memoryBudget: null,
      tasks: tasks.length,
      successes: tasks.length,
      successRate: 1,
      meanReward: 1,
      errors: 0,
    });
    expect(result.entries.map((e) => e.taskId)).toEqual(tasks.map((t) => t.id));
    expect(result.entries.map((e) => e.environmentCalls)).toEqual(tasks.map((t) => t.goldActions?.length));
    expect(result.entries.every((e) => e.rehearsal === null && e.tokens.rehearsal === 0)).toBe(true);
    expect(result.fidelity.overall).toMatchObject({
      compared: tasks.reduce((n, t) => n + (t.goldActions?.length ?? 0), 0),
      exactRate: 1,
      keysRate: 1,
      statusRate: 1,
    });
    for (const entry of result.entries) expect(EvaluationEntry.parse(JSON.parse(JSON.stringify(entry)))).toEqual(entry);
  });

  it("rehearses privately before committing: no real call during rehearsal, tokens of every role counted", async () => {
    const result = await evaluateShop({
      policy: goldPolicy(perfect),
      rehearsal: "sequential:2",
      memoryBudget: 120,
      writeTools: WRITE_TOOLS,
      tokenizer: charTokenizer,
    });
    expect(result).toMatchObject({
      setting: "sequential:2",
      memoryBudget: 120,
      successRate: 1,
      rehearsalEnvironmentCalls: 0,
      malformed: { reflect: 0, summarize: 0 },
    });
    expect(result.entries.map((e) => e.environmentCalls)).toEqual(tasks.map((t) => t.goldActions?.length));
    for (const entry of result.entries) {
      expect(entry.rehearsal).toMatchObject({ attempts: 2, summarySource: "policy" });
      expect(entry.rehearsal!.memoryTokens).toBeLessThanOrEqual(120);
      expect(entry.rehearsal!.memoryTokens).toBe(entry.rehearsal!.memory.length);
      expect(entry.rehearsal!.memory).toMatch(/^## Rehearsal memory/);
      expect(Object.keys(entry.tokens.byRole).sort()).toEqual(["act", "reflect", "rehearse", "summarize"]);
      expect(entry.tokens.total).toBe(entry.tokens.rehearsal + entry.tokens.committed);
      const roles = Object.values(entry.tokens.byRole).reduce((n, r) => n + r.promptTokens + r.outputTokens, 0);
      expect(roles).toBe(entry.tokens.total);
      expect(entry.tokens.estimated).toBe(false);
    }
    expect(result.tokensPerTask).toBeCloseTo(result.entries.reduce((n, e) => n + e.tokens.total, 0) / tasks.length, 9);
    expect(result.tokensPerTaskByRole.reflect).toBeGreaterThan(0);
    // Two attempts plus the committed run: each task's method tokens exceed its committed tokens.
    expect(result.entries.every((e) => e.tokens.rehearsal > e.tokens.committed)).toBe(true);
  });

  it("prompts the Rehearse role as the policy was trained, in attempts and fidelity probes alike", async () => {
    const { policy, systems: rehearseSystems } = systemsOf("rehearse");
    const rehearsePrompt = { sections: { instructions: "You are the shop's tools.", tools: false, examples: false } };
    const result = await evaluateShop({
      policy,
      tasks: tasks.slice(0, 2),
      rehearsal: "parallel:1",
      rehearsePrompt,
    });
    const calls = tasks.slice(0, 2).reduce((n, t) => n + (t.goldActions?.length ?? 0), 0);
    // One rehearsal attempt and one probe per gold call.
    expect(rehearseSystems).toHaveLength(2 * calls);
    expect(new Set(rehearseSystems)).toEqual(new Set(["You are the shop's tools."]));
    expect(result.fidelity.overall.exactRate).toBe(1);
  });

  it("prompts the reflect role with the instructions the policy was trained with", async () => {
    const { policy, systems: reflectSystems } = systemsOf("reflect");
    const run = (judgeInstructions?: { reflect: string }) =>
      evaluate({
        policy,
        tasks: tasks.slice(0, 2),
        environment: () => new BuiltinEnvironment(),
        reward: outcomeReward,
        rehearsal: "parallel:2",
        fidelity: false,
        ...(judgeInstructions ? { judgeInstructions } : {}),
      });
    await run({ reflect: "Judge it." });
    // Two attempts per task, each reflected on once.
    expect(reflectSystems).toEqual(["Judge it.", "Judge it.", "Judge it.", "Judge it."]);
    reflectSystems.length = 0;
    await run();
    expect(reflectSystems).toHaveLength(4);
    expect(reflectSystems.every((system) => system.startsWith("You review one private rehearsal"))).toBe(true);
  });

  it("reports fidelity per tool (hand-computed from what the flawed rehearser gets right)", async () => {
    const result = await evaluateShop({ policy: goldPolicy(flawed) });
    const tools = result.fidelity.tools;
    expect(tools.user).toMatchObject({ compared: goldCalls("user"), exactRate: 1, keysRate: 1, statusRate: 1 });
    // Item lookups: right keys, wrong values (prices are 1–9, never 0); orders: predicted missing, but they exist.
    expect(tools.item).toMatchObject({ compared: goldCalls("item"), exactRate: 0, keysRate: 1, statusRate: 1 });
    expect(goldCalls("order")).toBeGreaterThan(0);
    expect(tools.order).toMatchObject({ compared: goldCalls("order"), exactRate: 0, keysRate: 0, statusRate: 0 });
    const writes = WRITE_TOOLS.reduce((n, tool) => n + goldCalls(tool), 0);
    const total = tasks.reduce((n, t) => n + (t.goldActions?.length ?? 0), 0);
    expect(result.fidelity.overall.exactRate).toBeCloseTo((goldCalls("user") + writes) / total, 12);
    expect(result.fidelity.overall.keysRate).toBeCloseTo((goldCalls("user") + goldCalls("item") + writes) / total, 12);
    // Fidelity does not change what was committed.
    expect(result.successRate).toBe(1);
  });

  it("records a task whose episode fails as an error and goes on with the others", async () => {
    const victim = tasks[2]!;
    const result = await evaluateShop({
      policy: goldPolicy(perfect, { failOn: victim.messages.at(-1)!.content ?? "" }),
      fidelity: false,
    });
    expect(result.errors).toBe(1);
    expect(result.entries[2]).toMatchObject({ taskId: victim.id, success: false, reward: null, error: "server down", fidelity: [] });
    expect(result.successRate).toBeCloseTo((tasks.length - 1) / tasks.length, 12);
    expect(result.meanReward).toBe(1);
  });

  it("releases every task's environment, that of a task whose rehearsal failed before it was used too", async () => {
    const victim = tasks[1]!;
    const closed: string[] = [];
    const result = await evaluate({
      policy: goldPolicy(perfect, { failOn: victim.messages.at(-1)!.content ?? "" }),
      tasks: tasks.slice(0, 3),
      environment: (task) => {
        const environment = new BuiltinEnvironment();
        return Object.assign(environment, {
          close: () => {
            closed.push(task.id);
            return Promise.resolve();
          },
        });
      },
      reward: outcomeReward,
      rehearsal: "parallel:1",
      fidelity: false,
    });
    expect(result.entries[1]).toMatchObject({ taskId: victim.id, error: "server down", environmentCalls: 0 });
    // The committed rollout closes its environment, and evaluate closes each once more when the task ends.
    expect([...new Set(closed)].sort()).toEqual(
      tasks
        .slice(0, 3)
        .map((t) => t.id)
        .sort(),
    );
    expect(closed.filter((id) => id === victim.id)).toHaveLength(1);
  });

  it("keeps to the concurrency and reports progress once per task", async () => {
    let inFlight = 0;
    let peak = 0;
    const inner = goldPolicy(perfect);
    const policy = {
      id: inner.id,
      async generate(request: GenerateRequest) {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        try {
          return await inner.generate(request);
        } finally {
          inFlight -= 1;
        }
      },
    };
    const progress: number[] = [];
    await evaluateShop({
      policy,
      concurrency: 2,
      fidelity: false,
      onProgress: ({ done, total }) => progress.push(done / total),
    });
    expect(peak).toBe(2);
    expect(progress).toEqual(tasks.map((_, i) => (i + 1) / tasks.length));
  });

  it("estimates tokens for a policy that returns no token ids, and says so", async () => {
    const inner = goldPolicy(perfect);
    const policy = {
      id: "no-ids",
      async generate(request: GenerateRequest) {
        const generation = await inner.generate(request);
        return { ...generation, promptTokens: [], outputTokens: [], logprobs: null };
      },
    };
    const result = await evaluateShop({
      policy,
      tasks: tasks.slice(0, 2),
      rehearsal: "parallel:1",
    });
    expect(result.tokensEstimated).toBe(true);
    expect(result.tokensPerTask).toBeGreaterThan(0);
    expect(result.entries.every((e) => (e.tokens.byRole.act?.estimated ?? 0) > 0)).toBe(true);
  });
});
