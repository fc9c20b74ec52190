import { describe, expect, it } from "vitest";
import { BuiltinEnvironment, generateTasks, goldTrajectory, outcomeReward } from "@envace/bench-builtin";
import type { GenerateRequest, Policy, Task, ToolSpec } from "@envace/protocol";
import { computeAdvantages } from "@envace/grpo";
import { ConcurrencyLimit } from "@envace/concurrency";
import { ScriptedEnvironment, ScriptedPolicy, rowsOf, simulateUser, userToolsOf } from "@envace/trajectory";
import { parseConfig } from "./config/load.js";
import { rewards } from "./reward.js";
import { CallCounter, rollouts } from "./rollout.js";

const tasks = generateTasks({ seed: 9, count: 2, split: "train" });

/** Plays each task's gold Act turns, and rehearses every call with the real answer to it. */
function goldPolicy(task: Task): ScriptedPolicy {
  const examples = goldTrajectory(task).examples;
  const acts = examples.flatMap((e) => (e.role === "act" ? [e.text] : []));
  const answers = new Map(
    examples.flatMap((e) => (e.role === "rehearse" ? [[JSON.stringify({ name: e.call.name, arguments: e.call.arguments }), e.text]] : [])),
  );
  return new ScriptedPolicy("gold", (request: GenerateRequest) => {
    if (request.role === "act") return acts[request.messages.filter((m) => m.role === "tool").length]!;
    const prompt = request.messages.at(-1)?.content ?? "";
    const call = prompt.slice(prompt.lastIndexOf("\n") + 1);
    return answers.get(call) ?? "<execution_result>{}</execution_result>";
  });
}

describe("rollouts", () => {
  const task = tasks[0]!;
  const domain = { name: "builtin", environment: () => new BuiltinEnvironment(), rehearsePrompt: {} };
  const base = (environment: "self" | "real") => ({
    config: parseConfig(
      environment === "real" ? "mode: grpo\nenvironment: real\nrollout: { rollouts_per_task: 2 }" : "rollout: { rollouts_per_task: 2 }",
      "c.yaml",
    ),
    domain,
    tasks: [task],
    counter: new CallCounter(),
    limit: new ConcurrencyLimit(4),
    step: 1,
  });

  it("counts every call a grounded rollout makes to the real environment", async () => {
    const options = { ...base("real"), actor: goldPolicy(task), rehearser: goldPolicy(task) };
    const trajectories = await rollouts(options);
    const calls = trajectories.flatMap((t) => t.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])));
    expect(calls.length).toBe(2 * task.goldActions!.length);
    expect(calls.every((o) => o.provenance === "grounded")).toBe(true);
    expect(options.counter.take()).toBe(calls.length);
    const verdicts = await rewards({ reward: outcomeReward }, [task], trajectories);
    expect([...verdicts.values()].map((v) => v.status === "scored" && v.value)).toEqual([1, 1]);
  });

  it("releases every real environment of a step, when a rollout fails too", async () => {
    const created: { closed: number }[] = [];
    const closing = {
      ...domain,
      environment: () => {
        const record = { closed: 0 };
        created.push(record);
        return Object.assign(new BuiltinEnvironment(), { close: () => Promise.resolve(void (record.closed += 1)) });
      },
    };
    await rollouts({ ...base("real"), domain: closing, actor: goldPolicy(task), rehearser: goldPolicy(task) });
    expect(created.map((r) => r.closed)).toEqual([1, 1]);

    created.length = 0;
    let acts = 0;
    const gold = goldPolicy(task);
    const failing: Policy = {
      id: "failing",
      generate: (request, signal) => {
        acts += 1;
        return acts === 3 ? Promise.reject(new Error("model server down")) : gold.generate(request, signal);
      },
    };
    await expect(rollouts({ ...base("real"), domain: closing, actor: failing, rehearser: failing })).rejects.toThrow("model server down");
    expect(created.map((r) => r.closed)).toEqual([1, 1]);
  });

  it("self-unfolded rollouts rehearse every call and make none", async () => {
    const options = { ...base("self"), actor: goldPolicy(task), rehearser: goldPolicy(task) };
    const trajectories = await rollouts(options);
    const outcomes = trajectories.flatMap((t) => t.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])));
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.provenance === "rehearsed")).toBe(true);
    expect(options.counter.take()).toBe(0);
  });

  it("keeps a rollout masked while it unfolded masked, without asking the reward function", async () => {
    const trajectories = await rollouts({ ...base("self"), actor: goldPolicy(task), rehearser: goldPolicy(task) });
    const masked = { ...trajectories[0]!, reward: { status: "masked" as const, reason: "the judge failed while gating" } };
    let asked = 0;
    const reward = () => {
      asked += 1;
      return Promise.resolve({ status: "scored" as const, value: 1 });
    };
    const verdicts = await rewards({ reward }, [task], [masked, trajectories[1]!]);
    expect([...verdicts.values()]).toEqual([masked.reward, { status: "scored", value: 1 }]);
    expect(asked).toBe(1);
  });

  it("gives a task drawn twice in one step one group of twice the rollouts, which GRPO accepts", async () => {
    const options = { ...base("self"), tasks: [task, task], actor: goldPolicy(task), rehearser: goldPolicy(task) };
    const trajectories = await rollouts(options);
    expect(trajectories.map((t) => t.id)).toEqual([0, 1, 2, 3].map((r) => `${task.id}/${r}`));
    const verdicts = await rewards({ reward: outcomeReward }, options.tasks, trajectories);
    const batch = computeAdvantages(
      trajectories.flatMap((t) => rowsOf(t)),
      verdicts,
      { baseline: "row", roleWise: true, groupSize: 2 },
    );
    expect(batch.groups.filter((g) => g.role === "act").map((g) => g.rollouts)).toEqual([4]);
  });
});

describe("rollouts that start from a memory of the group's own first rollouts", () => {
  const task = tasks[0]!;
  /** Tries to buy at once; its rehearsed buy fails, so the memory has a predicted failure to show. */
  const buyer = new ScriptedPolicy("buyer", (request) => {
    if (request.role === "rehearse") return '<execution_result>{"error": {"code": "out_of_stock", "message": "none left"}}</execution_result>';
    if (request.role !== "act") return "unreadable";
    return request.messages.some((m) => m.role === "tool")
      ? "Sorry, it is out of stock."
      : '<tool_call>{"name": "buy", "arguments": {"user": "ada", "item": "rabo", "qty": 1}}</tool_call>';
  });

  it("conditions the rollouts after the first memory_attempts on their memory, numbers the group on and calls nothing", async () => {
    const counter = new CallCounter();
    const config = parseConfig("rollout: { rollouts_per_task: 4, memory_attempts: 2 }", "c.yaml");
    const domain = { name: "builtin", environment: () => new BuiltinEnvironment(), rehearsePrompt: {}, writeTools: ["buy"] };
    const trajectories = await rollouts({ config, domain, tasks: [task], actor: buyer, rehearser: buyer, counter, limit: new ConcurrencyLimit(4), step: 1 });
    expect(trajectories.map((t) => t.id)).toEqual([0, 1, 2, 3].map((r) => `${task.id}/${r}`));
    // Neither reflect nor summarize output reads, so the memory is the deterministic one.
    const memory = [
      "## Rehearsal memory",
      "You rehearsed this task privately before acting. These are your own predictions, not real results.",
      "Predicted to fail:",
      '- buy {"item":"rabo","qty":1,"user":"ada"}: out_of_stock (none left) [2/2 attempts]',
      'Plan: avoid buy {"item":"rabo","qty":1,"user":"ada"}',
    ].join("\n");
    const system = (t: (typeof trajectories)[number]) => t.context.find((m) => m.role === "system")?.content ?? "";
    for (const t of trajectories.slice(0, 2)) expect(t.context).toEqual(task.messages);
    for (const t of trajectories.slice(2)) expect(system(t)).toBe(`${task.messages.find((m) => m.role === "system")!.content}\n\n${memory}`);
    expect(counter.take()).toBe(0);
  });

  it("prompts the reflect role of those attempts with the domain's reflect instructions", async () => {
    const systems: string[] = [];
    const recording: Policy = {
      id: "recording",
      generate: (request) => {
        if (request.role === "reflect") systems.push(request.messages[0]?.content ?? "");
        return buyer.generate(request);
      },
    };
    const config = parseConfig("rollout: { rollouts_per_task: 4, memory_attempts: 2 }", "c.yaml");
    const domain = { name: "builtin", environment: () => new BuiltinEnvironment(), rehearsePrompt: {}, judgeInstructions: { reflect: "Judge it." } };
    await rollouts({
      config,
      domain,
      tasks: [task],
      actor: recording,
      rehearser: recording,
      counter: new CallCounter(),
      limit: new ConcurrencyLimit(4),
      step: 1,
    });
    expect(systems).toEqual(["Judge it.", "Judge it."]);
  });

  it("is refused at load when no rollout would start from the memory, or the attempts would be real", () => {
    expect(() => parseConfig("rollout: { rollouts_per_task: 2, memory_attempts: 2 }", "c.yaml")).toThrow(
      /rollout\.memory_attempts \(2\) must be below rollout\.rollouts_per_task \(2\)/,
    );
    expect(() => parseConfig("mode: grpo\nenvironment: real\nrollout: { memory_attempts: 2 }", "c.yaml")).toThrow(/memory_attempts.*environment: real/);
  });
});

describe("rollouts of a dual-control task (the user has a phone of their own)", () => {
  const spec = (name: string): ToolSpec => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });
  const task: Task = {
    id: "airplane",
    messages: [{ role: "user", content: "My phone shows No Service." }],
    tools: [spec("check_line")],
    metadata: { user_tools: [spec("toggle_airplane_mode")], user_scenario: "Your phone is in airplane mode." },
  };
  const side = (tools: readonly ToolSpec[]): ScriptedEnvironment => new ScriptedEnvironment(tools, () => "done");
  const names = (environment: ScriptedEnvironment): string[] => environment.calls.map((call) => call.name);
  const hermes = (name: string): string => `<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`;
  /** Checks the line, asks the user to turn airplane mode off; the user does, then stops; calls are rehearsed as done. */
  const play = new ScriptedPolicy("play", (request) => {
    if (request.role === "rehearse") return '<execution_result>{"status": "done"}</execution_result>';
    const last = request.messages.at(-1)!;
    if (request.role === "user") return last.role === "tool" ? "Fixed. ###STOP###" : hermes("toggle_airplane_mode");
    return request.messages.some((m) => m.role === "tool") ? "Please turn airplane mode off." : hermes("check_line");
  });
  const run = async (environment: "self" | "real") => {
    // The real sides exist in both modes, so a self-unfolded step could reach them if it were wired wrong.
    const sides = [0, 1].map(() => Object.assign(side(task.tools), { user: side(userToolsOf(task)) }));
    let made = 0;
    const domain = { name: "dual", environment: () => sides[made++ % 2]!, rehearsePrompt: {}, users: simulateUser({ policy: play }) };
    const config = parseConfig(
      environment === "real" ? "mode: grpo\nenvironment: real\nrollout: { rollouts_per_task: 2 }" : "rollout: { rollouts_per_task: 2 }",
      "c.yaml",
    );
    const counter = new CallCounter();
    const trajectories = await rollouts({ config, domain, tasks: [task], actor: play, rehearser: play, counter, limit: new ConcurrencyLimit(4), step: 1 });
    const userOutcomes = trajectories.map((t) =>
      t.steps.flatMap((s) => (s.type === "user" ? (s.actions ?? []).flatMap((a) => a.outcomes.map((o) => `${o.provenance}:${o.call.name}`)) : [])),
    );
    return { sides, calls: counter.take(), userOutcomes };
  };

  it("grounded, runs the user's calls on the real environment's own user side, and counts them", async () => {
    const { sides, calls, userOutcomes } = await run("real");
    expect(sides.map((s) => [names(s), names(s.user)])).toEqual([
      [["check_line"], ["toggle_airplane_mode"]],
      [["check_line"], ["toggle_airplane_mode"]],
    ]);
    expect(calls).toBe(4);
    expect(userOutcomes).toEqual([["grounded:toggle_airplane_mode"], ["grounded:toggle_airplane_mode"]]);
  });

  it("self-unfolded, rehearses the user's calls too and reaches neither real side", async () => {
    const { sides, calls, userOutcomes } = await run("self");
    expect(sides.map((s) => [names(s), names(s.user)])).toEqual([
      [[], []],
      [[], []],
    ]);
    expect(calls).toBe(0);
    expect(userOutcomes).toEqual([["rehearsed:toggle_airplane_mode"], ["rehearsed:toggle_airplane_mode"]]);
  });
});
