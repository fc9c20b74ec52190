import type { Task, ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "@envace/concurrency";
import { unfoldGroup } from "./group.js";
import { RehearsalEnvironment } from "./rehearsal-environment.js";
import { ScriptedPolicy } from "./scripted-policy.js";
import { deriveSeed } from "./seed.js";
import { singleTurn } from "./user-turns.js";

describe("deriveSeed", () => {
  it("is a function of its parts, in [0, 2³¹)", () => {
    expect(deriveSeed(7, 1, 2)).toBe(deriveSeed(7, 1, 2));
    const seeds = new Set<number>();
    for (let rollout = 0; rollout < 8; rollout++) for (let turn = 0; turn < 8; turn++) seeds.add(deriveSeed(7, rollout, turn));
    expect(seeds.size).toBe(64);
    expect(deriveSeed(8, 0, 0)).not.toBe(deriveSeed(7, 0, 0));
    expect(deriveSeed(2 ** 40 + 3, 1)).not.toBe(deriveSeed(3, 1));
    for (const seed of [...seeds, deriveSeed(-5), deriveSeed(2 ** 53 - 1, 99)]) {
      expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 31).toBe(true);
    }
  });
});

describe("seeded rollouts", () => {
  const tools: ToolSpec[] = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { key: { type: "string" } } } } }];
  const task: Task = { id: "t", messages: [{ role: "user", content: "Look up k twice." }], tools, metadata: {} };
  const call = '<tool_call>{"name":"lookup","arguments":{"key":"k"}}</tool_call>';

  /** The seed of every request of a self-unfolded group of three, by role, sorted. */
  async function seedsOf(seed: number | undefined): Promise<Record<string, (number | undefined)[]>> {
    const seen: Record<string, (number | undefined)[]> = { act: [], rehearse: [] };
    const policy = new ScriptedPolicy("p", (request) => {
      seen[request.role]!.push(request.sampling.seed);
      if (request.role === "rehearse") return '<execution_result>{"value":1}</execution_result>';
      return request.messages.filter((m) => m.role === "tool").length < 2 ? call : "Done.";
    });
    const sampling = seed === undefined ? {} : { act: { seed }, rehearse: { seed } };
    await unfoldGroup({
      task,
      size: 3,
      actor: policy,
      environment: new RehearsalEnvironment({ policy }),
      users: singleTurn,
      limit: new ConcurrencyLimit(3),
      sampling,
    });
    return Object.fromEntries(Object.entries(seen).map(([role, seeds]) => [role, seeds.sort((a, b) => (a ?? 0) - (b ?? 0))]));
  }

  it("give every request of every rollout its own seed, the same in a rerun", async () => {
    const first = await seedsOf(11);
    expect(first.act).toHaveLength(9);
    expect(first.rehearse).toHaveLength(6);
    expect(new Set([...first.act!, ...first.rehearse!]).size).toBe(15);
    expect(await seedsOf(11)).toEqual(first);
    expect((await seedsOf(12)).act).not.toEqual(first.act);
  });

  it("number a group unfolded in two parts on, so the parts are the whole group's rollouts, seeds included", async () => {
    const policy = new ScriptedPolicy("p", (request) => {
      if (request.role === "rehearse") return '<execution_result>{"value":1}</execution_result>';
      return `${request.sampling.seed}`;
    });
    const group = (size: number, firstRollout?: number) =>
      unfoldGroup({
        task,
        size,
        ...(firstRollout === undefined ? {} : { firstRollout }),
        actor: policy,
        environment: new RehearsalEnvironment({ policy }),
        users: singleTurn,
        sampling: { act: { seed: 5 } },
      });
    const whole = await group(3);
    const parts = [...(await group(1)), ...(await group(2, 1))];
    expect(parts.map((t) => [t.id, t.rollout])).toEqual([
      ["t/0", 0],
      ["t/1", 1],
      ["t/2", 2],
    ]);
    // Each rollout's one Act reply is its seed, derived from (5, rollout, turn 0, Act).
    expect(parts.map((t) => t.steps[0]!.type === "act" && t.steps[0]!.message.content)).toEqual([0, 1, 2].map((r) => `${deriveSeed(5, r, 0, 0)}`));
    expect(parts.map((t) => t.steps)).toEqual(whole.map((t) => t.steps));
  });

  it("leave requests unseeded when the role has no seed", async () => {
    const seeds = await seedsOf(undefined);
    expect([...seeds.act!, ...seeds.rehearse!].every((s) => s === undefined)).toBe(true);
  });
});
