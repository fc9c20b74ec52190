import type { PolicyRole, RewardVerdict, TrainingRow } from "@envace/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AdvantageInputError, computeAdvantages, computeRoleAdvantages, verdictsOf, type AdvantageBatch } from "./advantages.js";

function row(taskId: string, rollout: number, index: number, role: PolicyRole, invalid = false): TrainingRow {
  return {
    taskId,
    trajectoryId: `${taskId}/${rollout}`,
    rollout,
    index,
    role,
    promptTokens: [1, 2],
    outputTokens: [3],
    logprobs: [-0.5],
    invalid,
  };
}

const scored = (value: number): RewardVerdict => ({ status: "scored", value });
const masked = (reason: string): RewardVerdict => ({ status: "masked", reason });

/** Advantage of every row keyed by `trajectoryId#index`. */
function advantages(batch: AdvantageBatch): Record<string, number> {
  return Object.fromEntries(batch.rows.map((item) => [`${item.row.trajectoryId}#${item.row.index}`, item.advantage]));
}

// Task t, three rollouts:
//   rollout 0, reward 1:   act, rehearse, act
//   rollout 1, reward 0:   act, rehearse, rehearse
//   rollout 2, reward 0.5: act
const rows = [
  row("t", 0, 0, "act"),
  row("t", 0, 1, "rehearse"),
  row("t", 0, 2, "act"),
  row("t", 1, 0, "act"),
  row("t", 1, 1, "rehearse"),
  row("t", 1, 2, "rehearse"),
  row("t", 2, 0, "act"),
];
const verdicts = new Map([
  ["t/0", scored(1)],
  ["t/1", scored(0)],
  ["t/2", scored(0.5)],
]);

describe("role-wise baselines", () => {
  it("row mode: each role's baseline is the mean over its rows", () => {
    const batch = computeAdvantages(rows, verdicts, { baseline: "row" });
    // act rows score 1, 1, 0, 0.5: baseline 2.5 / 4 = 0.625.
    // rehearse rows score 1, 0, 0: baseline 1 / 3.
    const a = advantages(batch);
    expect(a["t/0#0"]).toBeCloseTo(1 - 0.625, 12);
    expect(a["t/0#2"]).toBeCloseTo(1 - 0.625, 12);
    expect(a["t/1#0"]).toBeCloseTo(0 - 0.625, 12);
    expect(a["t/2#0"]).toBeCloseTo(0.5 - 0.625, 12);
    expect(a["t/0#1"]).toBeCloseTo(1 - 1 / 3, 12);
    expect(a["t/1#1"]).toBeCloseTo(0 - 1 / 3, 12);
    expect(a["t/1#2"]).toBeCloseTo(0 - 1 / 3, 12);
    const act = batch.groups.find((g) => g.role === "act")!;
    expect(act).toMatchObject({ taskId: "t", rows: 4, rollouts: 3, zeroAdvantage: false });
    expect(act.baseline).toBeCloseTo(0.625, 12);
  });

  it("trajectory mode: each rollout containing the role counts once", () => {
    const batch = computeAdvantages(rows, verdicts, { baseline: "trajectory" });
    // act: rollout means 1, 0, 0.5 → baseline 0.5. rehearse: rollouts 0 and 1 → (1 + 0) / 2 = 0.5.
    const a = advantages(batch);
    expect(a["t/0#0"]).toBeCloseTo(0.5, 12);
    expect(a["t/1#0"]).toBeCloseTo(-0.5, 12);
    expect(a["t/2#0"]).toBe(0);
    expect(a["t/0#1"]).toBeCloseTo(0.5, 12);
    expect(a["t/1#2"]).toBeCloseTo(-0.5, 12);
  });

  it("plain GRPO uses one baseline for every role", () => {
    const byRow = computeAdvantages(rows, verdicts, { roleWise: false, baseline: "row" });
    // All seven rows: 1+1+1 + 0+0+0 + 0.5 = 3.5 → baseline 0.5.
    expect(byRow.groups).toHaveLength(1);
    expect(byRow.groups[0]!).toMatchObject({ role: "all", rows: 7, rollouts: 3, baseline: 0.5 });
    expect(advantages(byRow)["t/0#1"]).toBeCloseTo(0.5, 12);
    expect(advantages(byRow)["t/2#0"]).toBe(0);
    const byTrajectory = computeAdvantages(rows, verdicts, { roleWise: false, baseline: "trajectory" });
    // Rewards 1, 0, 0.5 → baseline 0.5, whatever the number of rows.
    expect(byTrajectory.groups[0]!.baseline).toBeCloseTo(0.5, 12);
  });

  it("divides by the sample standard deviation when asked", () => {
    const two = [row("u", 0, 0, "act"), row("u", 1, 0, "act")];
    const batch = computeAdvantages(
      two,
      new Map([
        ["u/0", scored(1)],
        ["u/1", scored(0)],
      ]),
      { normalizeStd: true },
    );
    // Scores 1, 0: mean 0.5, sample std √((0.25 + 0.25) / 1) = √0.5.
    const std = Math.sqrt(0.5);
    expect(batch.groups[0]!.std).toBeCloseTo(std, 12);
    expect(advantages(batch)["u/0#0"]).toBeCloseTo(0.5 / (std + 1e-6), 12);
    expect(advantages(batch)["u/1#0"]).toBeCloseTo(-0.5 / (std + 1e-6), 12);
  });
});

describe("invalid outputs", () => {
  it("lower the score of the invalid row before the baseline is taken", () => {
    const withInvalid = rows.map((r) => (r.trajectoryId === "t/1" && r.index === 2 ? { ...r, invalid: true } : r));
    const batch = computeAdvantages(withInvalid, verdicts);
    // rehearse rows score 1, 0, 0 − 0.1: baseline 0.9 / 3 = 0.3.
    const a = advantages(batch);
    expect(a["t/0#1"]).toBeCloseTo(0.7, 12);
    expect(a["t/1#1"]).toBeCloseTo(-0.3, 12);
    expect(a["t/1#2"]).toBeCloseTo(-0.4, 12);
    const item = batch.rows.find((r) => r.row.index === 2 && r.row.trajectoryId === "t/1")!;
    expect(item.reward).toBe(0);
    expect(item.score).toBeCloseTo(-0.1, 12);
  });

  it("use the configured penalty", () => {
    const two = [row("u", 0, 0, "act", true), row("u", 1, 0, "act")];
    const batch = computeAdvantages(
      two,
      new Map([
        ["u/0", scored(1)],
        ["u/1", scored(1)],
      ]),
      { invalidPenalty: 0.5 },
    );
    // Scores 0.5 and 1: baseline 0.75.
    expect(advantages(batch)["u/0#0"]).toBeCloseTo(-0.25, 12);
  });
});

describe("row bonuses", () => {
  it("add to the named rows' scores before the baseline; the rollout's reward stays as it was", () => {
    // Rehearse row t/1#1 gets +0.6: rehearse scores 1, 0.6, 0 → baseline 1.6 / 3.
    const bonus = (r: TrainingRow): number => (r.trajectoryId === "t/1" && r.index === 1 ? 0.6 : 0);
    const batch = computeAdvantages(rows, verdicts, {}, { bonus });
    const a = advantages(batch);
    expect(a["t/0#1"]).toBeCloseTo(1 - 1.6 / 3, 12);
    expect(a["t/1#1"]).toBeCloseTo(0.6 - 1.6 / 3, 12);
    expect(a["t/1#2"]).toBeCloseTo(-1.6 / 3, 12);
    // The act group is untouched: 1, 1, 0, 0.5 → baseline 0.625.
    expect(a["t/0#0"]).toBeCloseTo(0.375, 12);
    const item = batch.rows.find((r) => r.row.index === 1 && r.row.trajectoryId === "t/1")!;
    expect(item.reward).toBe(0);
    expect(item.score).toBeCloseTo(0.6, 12);
    // Passed through per role, and a bonus that is not a finite number is refused.
    expect(advantages(computeRoleAdvantages(rows, () => verdicts, {}, { bonus }))).toEqual(a);
    expect(() => computeAdvantages(rows, verdicts, {}, { bonus: () => Number.NaN })).toThrow(/bonus NaN/);
  });
});
describe("group composition", () => {
  it("leaves masked rollouts out and reports them; they are never scored 0", () => {
    const batch = computeAdvantages(rows, new Map([...verdicts, ["t/1", masked("judge unreachable")]]), { groupSize: 3 });
    // act rows left: 1, 1, 0.5 → baseline 2.5 / 3.
    expect(advantages(batch)["t/2#0"]).toBeCloseTo(0.5 - 2.5 / 3, 12);
    expect(batch.rows.some((r) => r.row.trajectoryId === "t/1")).toBe(false);
    expect(batch.masked).toEqual([{ taskId: "t", trajectoryId: "t/1", rollout: 1, reason: "judge unreachable", rows: 3 }]);
    expect(batch.tasks).toEqual([{ taskId: "t", scoredRollouts: 2, maskedRollouts: 1, uneven: true }]);
  });

  it("uses a group of one as it is: nothing to compare, so zero advantage", () => {
    const batch = computeAdvantages([row("solo", 0, 0, "act")], new Map([["solo/0", scored(0.8)]]));
    expect(batch.rows[0]!.advantage).toBe(0);
    expect(batch.groups[0]!.zeroAdvantage).toBe(true);
  });

  it("reports groups whose advantages are all zero, exactly zero despite rounding", () => {
    const same = [row("s", 0, 0, "act"), row("s", 1, 0, "act"), row("s", 2, 0, "act"), row("s", 2, 1, "rehearse")];
    const v = new Map([
      ["s/0", scored(0.1)],
      ["s/1", scored(0.1)],
      ["s/2", scored(0.1)],
    ]);
    const batch = computeAdvantages(same, v);
    expect(batch.rows.map((r) => r.advantage)).toEqual([0, 0, 0, 0]);
    expect(batch.groups.map((g) => [g.role, g.zeroAdvantage])).toEqual([
      ["act", true],
      ["rehearse", true],
    ]);
    const dropped = computeAdvantages(same, v, { dropZeroAdvantageGroups: true });
    expect(dropped.rows).toEqual([]);
    expect(dropped.dropped).toHaveLength(4);
  });

  it("refuses a row whose trajectory has no verdict", () => {
    expect(() => computeAdvantages(rows, new Map([["t/0", scored(1)]]))).toThrow(/row 0 of trajectory "t\/1": no reward verdict/);
  });

  it("refuses a rollout that appears twice (groups are never padded)", () => {
    const padded = [...rows, { ...row("t", 2, 0, "act"), trajectoryId: "t/2-copy" }];
    expect(() => computeAdvantages(padded, new Map([...verdicts, ["t/2-copy", scored(0.5)]]))).toThrow(AdvantageInputError);
    expect(() => computeAdvantages([...rows, row("t", 0, 1, "act")], verdicts)).toThrow(/trajectory "t\/0": row index 1 appears twice/);
  });

  it("refuses a trajectory that claims two tasks or a non-finite reward", () => {
    const odd = [row("t", 0, 0, "act"), { ...row("t", 0, 1, "act"), taskId: "other" }];
    expect(() => computeAdvantages(odd, verdicts)).toThrow(/appears with task "t" and task "other"/);
    expect(() => computeAdvantages([row("t", 0, 0, "act")], new Map([["t/0", scored(NaN)]]))).toThrow(/not a finite number/);
  });

  it("builds the verdict map from trajectories and names one without a reward", () => {
    expect(verdictsOf([{ id: "a", reward: scored(1) }]).get("a")).toEqual(scored(1));
    expect(() => verdictsOf([{ id: "b" }])).toThrow(/trajectory "b" has no reward verdict/);
  });
});

// Random batches: up to 3 tasks, up to 5 rollouts each, 1–6 rows per rollout, rewards on a coarse
// grid so that ties (and zero-advantage groups) happen, some rollouts masked.
const arbBatch = fc
  .array(
    fc.array(
      fc.record({
        reward: fc.integer({ min: 0, max: 4 }).map((k) => k / 4),
        masked: fc.integer({ min: 0, max: 9 }).map((k) => k < 2),
        roles: fc.array(fc.record({ role: fc.constantFrom<PolicyRole>("act", "rehearse"), invalid: fc.boolean() }), {
          minLength: 1,
          maxLength: 6,
        }),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((tasks) => {
    const rows: TrainingRow[] = [];
    const verdicts = new Map<string, RewardVerdict>();
    tasks.forEach((rollouts, t) => {
      rollouts.forEach((rollout, g) => {
        rollout.roles.forEach(({ role, invalid }, i) => rows.push(row(`task${t}`, g, i, role, invalid)));
        verdicts.set(`task${t}/${g}`, rollout.masked ? masked("unreachable") : scored(rollout.reward));
      });
    });
    return { rows, verdicts };
  });

describe("properties", () => {
  it("row mode: the advantages of one role in one group sum to zero", () => {
    fc.assert(
      fc.property(arbBatch, ({ rows, verdicts }) => {
        const batch = computeAdvantages(rows, verdicts, { baseline: "row" });
        const sums = new Map<string, number>();
        for (const item of batch.rows) {
          const key = `${item.row.taskId}/${item.groupRole}`;
          sums.set(key, (sums.get(key) ?? 0) + item.advantage);
        }
        for (const sum of sums.values()) expect(Math.abs(sum)).toBeLessThan(1e-9);
      }),
    );
  });

  it("trajectory mode: the rollout-mean advantages of one role in one group sum to zero", () => {
    fc.assert(
      fc.property(arbBatch, ({ rows, verdicts }) => {
        const batch = computeAdvantages(rows, verdicts, { baseline: "trajectory" });
        const perRollout = new Map<string, number[]>();
        for (const item of batch.rows) {
          const key = `${item.row.taskId}/${item.groupRole}/${item.row.trajectoryId}`;
          perRollout.set(key, [...(perRollout.get(key) ?? []), item.advantage]);
        }
        const sums = new Map<string, number>();
        for (const [key, list] of perRollout) {
          const group = key.split("/").slice(0, 2).join("/");
          sums.set(group, (sums.get(group) ?? 0) + list.reduce((s, a) => s + a, 0) / list.length);
        }
        for (const sum of sums.values()) expect(Math.abs(sum)).toBeLessThan(1e-9);
      }),
    );
  });

  it("masking a rollout changes the others only by removing it from the group", () => {
    fc.assert(
      fc.property(arbBatch, fc.constantFrom("row" as const, "trajectory" as const), ({ rows, verdicts }, baseline) => {
        const withMasked = computeAdvantages(rows, verdicts, { baseline });
        const live = rows.filter((r) => verdicts.get(r.trajectoryId)!.status === "scored");
        const without = computeAdvantages(live, verdicts, { baseline });
        expect(advantages(withMasked)).toEqual(advantages(without));
      }),
    );
  });

  it("does not depend on the order of the rows", () => {
    const arbShuffled = arbBatch.chain((batch) =>
      fc.shuffledSubarray(batch.rows, { minLength: batch.rows.length, maxLength: batch.rows.length }).map((shuffled) => ({ ...batch, shuffled })),
    );
    fc.assert(
      fc.property(arbShuffled, ({ rows, verdicts, shuffled }) => {
        const a = advantages(computeAdvantages(rows, verdicts));
        const b = advantages(computeAdvantages(shuffled, verdicts));
        expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
        for (const key of Object.keys(a)) expect(b[key]).toBeCloseTo(a[key]!, 12);
      }),
    );
  });
});

describe("computeRoleAdvantages (each role inherits its own reward)", () => {
  // Act rows judged by one reward (1, 0, 0.5 as above), Rehearse rows by another: rollout 0
  // scores 0 and rollout 1 scores 1 for the Rehearse role (rollout 2 has no Rehearse row).
  const rehearseVerdicts = new Map([
    ["t/0", scored(0)],
    ["t/1", scored(1)],
    ["t/2", masked("no world")],
  ]);
  const batch = computeRoleAdvantages(rows, (role) => (role === "rehearse" ? rehearseVerdicts : verdicts), { baseline: "row" });

  it("baselines each role against its own reward, rows in input order", () => {
    const a = advantages(batch);
    // act: as with one reward (baseline 0.625).
    expect(a["t/0#0"]).toBeCloseTo(1 - 0.625, 12);
    expect(a["t/2#0"]).toBeCloseTo(0.5 - 0.625, 12);
    // rehearse rows score 0, 1, 1: baseline 2/3.
    expect(a["t/0#1"]).toBeCloseTo(0 - 2 / 3, 12);
    expect(a["t/1#1"]).toBeCloseTo(1 - 2 / 3, 12);
    expect(a["t/1#2"]).toBeCloseTo(1 - 2 / 3, 12);
    expect(batch.rows.map((item) => `${item.row.trajectoryId}#${item.row.index}`)).toEqual(["t/0#0", "t/0#1", "t/0#2", "t/1#0", "t/1#1", "t/1#2", "t/2#0"]);
  });

  it("counts a rollout masked for one role once, and refuses a single baseline over roles", () => {
    // Rollout 2 has no Rehearse row, so its Rehearse verdict is never read.
    expect(batch.masked).toEqual([]);
    const maskedForRehearse = new Map([...rehearseVerdicts, ["t/1", masked("no world")]]);
    const both = computeRoleAdvantages(rows, (role) => (role === "rehearse" ? maskedForRehearse : verdicts), { baseline: "row" });
    expect(both.masked).toEqual([{ taskId: "t", trajectoryId: "t/1", rollout: 1, reason: "no world", rows: 2 }]);
    // Act rows of rollout 1 still train; its Rehearse rows do not.
    expect(both.rows.map((item) => `${item.row.trajectoryId}#${item.row.index}`)).toEqual(["t/0#0", "t/0#1", "t/0#2", "t/1#0", "t/2#0"]);
    expect(batch.tasks).toEqual([{ taskId: "t", scoredRollouts: 3, maskedRollouts: 0, uneven: false }]);
    expect(both.tasks).toEqual([{ taskId: "t", scoredRollouts: 3, maskedRollouts: 1, uneven: false }]);
    expect(() => computeRoleAdvantages(rows, () => verdicts, { roleWise: false })).toThrow(AdvantageInputError);
  });
});
