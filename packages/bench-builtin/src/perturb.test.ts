import { toWireToolCall, type JsonObject, type Message, type Task } from "@envace/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scoreChecklist } from "./checklist.js";
import { generateTasks } from "./generate.js";
import { builtinMeta } from "./meta.js";
import { Shop, WRITE_TOOLS } from "./tools.js";
import { scoreTrajectory } from "./verify.js";

/**
 * Perturbed gold dialogues must lose their reward. Dialogues are edited as an agent would have
 * produced them; scoring replays the calls on a private copy of the world, so fabricated tool
 * messages in the edited dialogue cannot help.
 */
const tasks: Task[] = [...generateTasks({ seed: 11, count: 200, split: "train" }), ...generateTasks({ seed: 11, count: 200, split: "test" })];

interface Call {
  name: string;
  arguments: JsonObject;
}

/** The gold dialogue as a list of calls and a reply, and back. */
function split(task: Task): { calls: Call[]; reply: string } {
  return { calls: task.goldActions!.map(({ name, arguments: args }) => ({ name, arguments: args })), reply: task.reference!.at(-1)!.content! };
}

function dialogue(task: Task, calls: readonly Call[], reply: string): Message[] {
  return [
    ...task.messages,
    ...calls.flatMap((call, i): Message[] => [
      { role: "assistant", content: null, tool_calls: [toWireToolCall({ id: `p${i}`, ...call })] },
      { role: "tool", tool_call_id: `p${i}`, content: "{}" },
    ]),
    { role: "assistant", content: reply },
  ];
}

const isWrite = (call: Call) => (WRITE_TOOLS as readonly string[]).includes(call.name);
const verifiable = (task: Task, messages: Message[]) => scoreTrajectory(task, messages);
const checklist = (task: Task, messages: Message[]) => scoreChecklist(task, messages);
const value = (verdict: ReturnType<typeof scoreTrajectory>) => (verdict.status === "scored" ? verdict.value : NaN);

describe("a skipped lookup", () => {
  it("fails the lookup item and, through dependence, the write and reply items", () => {
    for (const task of tasks) {
      const { calls, reply } = split(task);
      calls.forEach((call, k) => {
        if (isWrite(call)) return;
        const verdict = checklist(task, dialogue(task, calls.toSpliced(k, 1), reply));
        expect(value(verdict)).toBeLessThan(0.3);
        expect(verdict.status === "scored" && verdict.components![`read-${call.name}`]).toBe(0);
      });
    }
  });

  it("leaves an agent that writes blind unable to succeed: it cannot know order ids, prices or failures", () => {
    let successes = 0;
    for (const task of tasks) {
      const meta = builtinMeta(task);
      const r = meta.request;
      // The best an agent can do from the instruction alone; it is even handed the gold reply.
      const guess: Call[] =
        r.family === "buy"
          ? [{ name: "buy", arguments: { user: r.user, item: r.item, qty: r.qty } }]
          : r.family === "pay"
            ? [{ name: "pay", arguments: { from: r.user, to: r.to, amount: r.count } }]
            : r.family === "cancel"
              ? [{ name: "cancel", arguments: { id: "o1" } }]
              : [
                  { name: "cancel", arguments: { id: "o1" } },
                  { name: "buy", arguments: { user: r.user, item: r.newItem, qty: r.qty } },
                ];
      const score = value(verifiable(task, dialogue(task, guess, split(task).reply)));
      if (meta.outcome !== "ok") expect(score).toBe(0);
      successes += score;
      expect(value(checklist(task, dialogue(task, guess, split(task).reply)))).toBeLessThan(0.31);
    }
    expect(successes / tasks.length).toBeLessThan(0.35);
  });
});

describe("a wrong argument in a write", () => {
  it("changes the final state, so the outcome check and the writes item fail", () => {
    let checked = 0;
    for (const task of tasks) {
      const { calls, reply } = split(task);
      const k = calls.findIndex(isWrite);
      if (k === -1) continue;
      const write = calls[k]!;
      const args = { ...write.arguments };
      if (write.name === "buy") args.qty = (args.qty as number) + 1;
      if (write.name === "pay") args.amount = (args.amount as number) + 1;
      if (write.name === "cancel") args.id = args.id === "o1" ? "o2" : "o1";
      const perturbed = dialogue(task, calls.toSpliced(k, 1, { name: write.name, arguments: args }), reply);
      expect(verifiable(task, perturbed)).toMatchObject({ value: 0, components: { state: 0 } });
      const verdict = checklist(task, perturbed);
      expect(verdict.status === "scored" && verdict.components!.writes).toBe(0);
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
  });
});

describe("writing despite a violated precondition", () => {
  it("is rejected by the environment with exactly the code the lookups predicted, and fails both checks", () => {
    let checked = 0;
    for (const task of tasks) {
      const meta = builtinMeta(task);
      if (meta.outcome === "ok") continue;
      const r = meta.request;
      const w = meta.world;
      const orderOf = (user: string, item: string) => Object.entries(w.orders).find(([, o]) => o.user === user && o.item === item)![0];
      const attempt: Call[] =
        r.family === "buy"
          ? [{ name: "buy", arguments: { user: r.user, item: r.item, qty: r.qty } }]
          : r.family === "pay"
            ? [{ name: "pay", arguments: { from: r.user, to: r.to, amount: r.count * w.items[r.item]!.price } }]
            : r.family === "cancel"
              ? [{ name: "cancel", arguments: { id: orderOf(r.user, r.item) } }]
              : [
                  { name: "cancel", arguments: { id: orderOf(r.user, r.item) } },
                  { name: "buy", arguments: { user: r.user, item: r.newItem, qty: r.qty } },
                ];
      const shop = new Shop(w);
      const firstError = attempt.map((c) => shop.call(c.name, c.arguments)).find((res) => !res.ok);
      expect(firstError).toMatchObject({ ok: false, error: { code: meta.outcome } });

      const { calls, reply } = split(task);
      const perturbed = dialogue(task, [...calls, ...attempt], reply);
      expect(verifiable(task, perturbed)).toMatchObject({ value: 0, components: { state: 0 } });
      const verdict = checklist(task, perturbed);
      expect(verdict.status === "scored" && verdict.components!["no-write"]).toBe(0);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});

describe("a reply without the required facts", () => {
  it("fails the info component and the reply item, even when the state is right", () => {
    for (const task of tasks) {
      const { calls } = split(task);
      for (const reply of ["Done.", "", "<think>order o5, no item, balance, stock, locked, shipped</think>OK."]) {
        expect(verifiable(task, dialogue(task, calls, reply))).toEqual({ status: "scored", value: 0, components: { state: 1, info: 0 } });
        const verdict = checklist(task, dialogue(task, calls, reply));
        expect(verdict.status === "scored" && verdict.components!.reply).toBe(0);
      }
    }
  });
});

describe("a repeated write", () => {
  it("changes the state or is rejected, and fails", () => {
    for (const task of tasks) {
      const { calls, reply } = split(task);
      const last = calls.findLast(isWrite);
      if (!last) continue;
      expect(value(verifiable(task, dialogue(task, [...calls, last], reply)))).toBe(0);
      expect(value(checklist(task, dialogue(task, [...calls, last], reply)))).toBeLessThan(1);
    }
  });
});

describe("checklist and outcome check agree", () => {
  it("a dialogue that passes every checklist item also passes the outcome check, under random edits", () => {
    let fullMarks = 0;
    const edit = fc.oneof(
      fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("repeat" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("bump" as const), at: fc.nat(), by: fc.integer({ min: -2, max: 2 }) }),
      fc.record({ kind: fc.constant("reply" as const), text: fc.constantFrom("", "Done.", "no item", "balance stock locked shipped") }),
    );
    fc.assert(
      fc.property(fc.nat({ max: tasks.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 3 }), (index, edits) => {
        const task = tasks[index]!;
        let { calls, reply } = split(task);
        for (const e of edits) {
          const at = "at" in e && calls.length > 0 ? e.at % calls.length : 0;
          if (e.kind === "drop" && calls.length > 0) calls = calls.toSpliced(at, 1);
          if (e.kind === "repeat" && calls.length > 0) calls = calls.toSpliced(at, 0, calls[at]!);
          if (e.kind === "swap" && at + 1 < calls.length) calls = calls.toSpliced(at, 2, calls[at + 1]!, calls[at]!);
          if (e.kind === "bump" && calls.length > 0) {
            const c = calls[at]!;
            const key = Object.keys(c.arguments).find((k) => typeof c.arguments[k] === "number");
            if (key) calls = calls.toSpliced(at, 1, { name: c.name, arguments: { ...c.arguments, [key]: Math.max(1, (c.arguments[key] as number) + e.by) } });
          }
          if (e.kind === "reply") reply = e.text;
        }
        const messages = dialogue(task, calls, reply);
        if (value(checklist(task, messages)) > 1 - 1e-9) {
          fullMarks++;
          expect(value(verifiable(task, messages))).toBe(1);
        }
      }),
      { numRuns: 600, seed: 5 },
    );
    // Some edits are harmless (a repeated lookup, two lookups swapped); the property must be exercised.
    expect(fullMarks).toBeGreaterThan(20);
  });
});
