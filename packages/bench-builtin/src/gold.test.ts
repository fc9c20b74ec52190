import { Checklist, Cm2Record, Trajectory, type Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "@envace/records";
import { checklistPredicates, checklistRules, scoreChecklist } from "./checklist.js";
import { toCm2Record } from "./cm2.js";
import { BuiltinEnvironment } from "./environment.js";
import { toolContent } from "./format.js";
import { generateTasks } from "./generate.js";
import { SftExample, goldTrajectory, renderPlain } from "./gold.js";
import { builtinMeta } from "./meta.js";
import { transcriptOf } from "./transcript.js";
import { checkOutcome, scoreTrajectory } from "./verify.js";

const tasks: Task[] = [...generateTasks({ seed: 3, count: 150, split: "train" }), ...generateTasks({ seed: 3, count: 150, split: "test" })];

describe("gold trajectories replayed against the real environment", () => {
  it("get every recorded answer back, reach the expected state and score 1", async () => {
    const env = new BuiltinEnvironment();
    for (const task of tasks) {
      const gold = goldTrajectory(task);
      await env.reset(task);
      for (const step of gold.trajectory.steps) {
        if (step.type !== "act") continue;
        for (const outcome of step.outcomes) expect(await env.call(outcome.call)).toEqual(outcome.result);
      }
      const state = await env.state();
      expect(canonicalJson(state)).toBe(canonicalJson(task.expectedState!));
      const reply = gold.messages.at(-1)!.content!;
      expect(checkOutcome(task, { state, reply })).toEqual({ status: "scored", value: 1, components: { state: 1, info: 1 } });
    }
  });

  it("score 1 by replay (as a trajectory and as a dialogue) and pass every checklist item", () => {
    for (const task of tasks) {
      const gold = goldTrajectory(task);
      expect(gold.trajectory.reward).toEqual({ status: "scored", value: 1, components: { state: 1, info: 1 } });
      expect(scoreTrajectory(task, gold.trajectory)).toMatchObject({ value: 1 });
      expect(scoreTrajectory(task, gold.messages)).toMatchObject({ value: 1 });
      const checklist = scoreChecklist(task, gold.trajectory);
      expect(checklist.status === "scored" && checklist.value).toBeCloseTo(1, 9);
      const transcript = transcriptOf(gold.trajectory);
      for (const [id, predicate] of Object.entries(checklistPredicates(task))) expect([id, predicate(transcript)]).toEqual([id, true]);
    }
  });
});

describe("gold records", () => {
  it("are valid protocol trajectories whose tool results are all grounded", () => {
    for (const task of tasks.slice(0, 100)) {
      const { trajectory } = goldTrajectory(task);
      expect(Trajectory.parse(JSON.parse(JSON.stringify(trajectory)))).toEqual(trajectory);
      const outcomes = trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
      expect(outcomes.map((o) => o.provenance).every((p) => p === "grounded")).toBe(true);
      expect(outcomes.map((o) => o.call)).toEqual(task.goldActions);
    }
  });

  it("equal the task's reference dialogue", () => {
    for (const task of tasks) expect(goldTrajectory(task).messages).toEqual(task.reference);
  });

  it("hold one SFT example per generation: act, rehearse, act, …, act", () => {
    for (const task of tasks) {
      const { examples, messages } = goldTrajectory(task);
      const calls = task.goldActions!.length;
      expect(examples.map((e) => e.role)).toEqual([...Array.from({ length: calls }, () => ["act", "rehearse"]).flat(), "act"]);
      for (const example of examples) expect(SftExample.parse(example)).toEqual(example);
      // Each example sees exactly the dialogue before its turn; a rehearsal also sees the calling turn.
      examples.forEach((example, i) => {
        const before = task.messages.length + 2 * Math.floor(i / 2);
        expect(example.history).toEqual(messages.slice(0, before));
        expect(messages[before]).toEqual(example.role === "act" ? example.target : example.latestAct);
        if (example.role === "rehearse") expect(messages[before + 1]).toMatchObject({ role: "tool", tool_call_id: example.call.id });
      });
    }
  });

  it("render Act turns as <tool_call> blocks and Rehearse targets as <execution_result> of the real answer", () => {
    const task = tasks.find((t) => t.goldActions!.some((c) => c.name === "item"))!;
    const { examples } = goldTrajectory(task);
    for (const example of examples) {
      if (example.role === "act" && example.target.tool_calls) {
        const call = example.target.tool_calls[0]!;
        expect(example.text).toBe(`<tool_call>{"name":"${call.function.name}","arguments":${call.function.arguments}}</tool_call>`);
      }
      if (example.role === "rehearse") {
        const inner = /^<execution_result>(.*)<\/execution_result>$/.exec(example.text)![1]!;
        expect(JSON.parse(inner)).toEqual(toolContent(example.result));
        expect(example.latestAct.tool_calls![0]!.id).toBe(example.call.id);
      }
    }
    expect(examples.at(-1)!.text).toMatch(/^(Done|Sorry)/);
  });

  it("carry tool errors as {error: {code, message}} in both the tool message and the execution result", () => {
    const task = generateTasks({ seed: 3, count: 400, split: "train" }).find((t) => (t.metadata as { outcome: string }).outcome === "NOT_FOUND")!;
    const { examples, messages } = goldTrajectory(task);
    const rehearse = examples.filter((e) => e.role === "rehearse").at(-1)!;
    expect(rehearse.result.status).toBe("error");
    expect(rehearse.text).toMatch(/^<execution_result>\{"error":\{"code":"NOT_FOUND","message":"no item [a-z]+"\}\}<\/execution_result>$/);
    expect(messages.filter((m) => m.role === "tool").at(-1)!.content).toMatch(/^\{"error":\{"code":"NOT_FOUND"/);
  });

  it("render as plain text, one message per line", () => {
    const text = renderPlain(tasks[0]!.reference!);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^system: /);
    expect(lines[1]).toMatch(/^user: /);
    expect(lines[2]).toMatch(/^assistant: <tool_call>\{"name":"user","arguments":\{"user":"[a-z]+"\}\}<\/tool_call>$/);
    expect(lines[3]).toMatch(/^tool: <execution_result>\{"balance":\d+,"orders":\{.*\}\}<\/execution_result>$/);
    expect(lines.at(-1)).toMatch(/^assistant: (Done|Sorry)/);
  });
});

describe("checklists", () => {
  it("are CM2 checklists (weights sum to 1, dependencies known) that match their rules", () => {
    for (const task of tasks) {
      expect(task.checklists).toHaveLength(1);
      expect(Checklist.parse(task.checklists![0])).toEqual(task.checklists![0]);
      expect(task.checklists![0]).toEqual([checklistRules(task).map((r) => r.item)]);
    }
  });

  it("ask for each lookup, the exact writes or no write, and the reply, with writes depending on lookups", () => {
    const swap = tasks.find(
      (t) => (t.metadata as { family: string; outcome: string }).family === "swap" && (t.metadata as { outcome: string }).outcome === "ok",
    )!;
    const items = swap.checklists![0]![0]!;
    expect(items.map((i) => [i.id, i.weight, i.dependence, i.required_for_next_turn])).toEqual([
      ["read-user", 0.1, [], false],
      ["read-order", 0.1, [], false],
      ["read-item", 0.1, [], false],
      ["writes", 0.4, ["read-user", "read-order", "read-item"], true],
      ["reply", 0.3, ["writes"], false],
    ]);
    const failing = tasks.find((t) => (t.metadata as { outcome: string }).outcome === "LOW_BALANCE")!;
    expect(failing.checklists![0]![0]!.map((i) => i.id)).toContain("no-write");
  });

  it("export with their dialogue as CM2 records", () => {
    for (const task of tasks.slice(0, 50)) {
      const record = toCm2Record(task);
      expect(Cm2Record.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
      expect(record.messages).toEqual(task.reference);
    }
  });
});

describe("the declined write of a failing-precondition task", () => {
  it("is the request's own write, refused by the real environment with the task's outcome code", async () => {
    const env = new BuiltinEnvironment();
    let failing = 0;
    for (const task of tasks) {
      const meta = builtinMeta(task);
      const { declined, examples } = goldTrajectory(task);
      if (meta.outcome === "ok") {
        expect(declined).toEqual([]);
        continue;
      }
      failing++;
      expect(declined).toHaveLength(1);
      const example = declined[0]!;
      if (example.role !== "rehearse") throw new Error("a declined write is a Rehearse example");
      // The write the user asked for, with the request's own arguments (an order by its id).
      const request = meta.request;
      const expected =
        request.family === "buy"
          ? { name: "buy", arguments: { user: request.user, item: request.item, qty: request.qty } }
          : request.family === "swap" && meta.outcome !== "WRONG_STATE"
            ? { name: "buy", arguments: { user: request.user, item: request.newItem, qty: request.qty } }
            : request.family === "pay"
              ? { name: "pay", arguments: { from: request.user, to: request.to, amount: request.count * meta.world.items[request.item]!.price } }
              : {
                  name: "cancel",
                  arguments: { id: Object.entries(meta.world.orders).find(([, o]) => o.user === request.user && o.item === request.item)![0] },
                };
      expect({ name: example.call.name, arguments: example.call.arguments }).toEqual(expected);
      // Asked where the reply is given: the history is the reply's, the answer the real shop's.
      expect(example.history).toEqual(examples.at(-1)!.history);
      await env.reset(task);
      for (const call of task.goldActions ?? []) await env.call(call);
      const real = await env.call(example.call);
      expect(example.result).toEqual(real);
      expect(real.status === "error" && real.error.code).toBe(meta.outcome);
    }
    expect(failing).toBeGreaterThan(50);
  });
});
