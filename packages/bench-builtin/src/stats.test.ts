import { describe, expect, it } from "vitest";
import { generateTasks } from "./generate.js";
import { renderPlain } from "./gold.js";
import { SYSTEM_PROMPT } from "./prompt.js";
import { GOLD_CHAR_BUDGET, taskStats } from "./stats.js";

describe("taskStats", () => {
  it("counts families, outcomes, calls and lengths", () => {
    // seed 1, train: swap ok (5 calls), pay LOW_BALANCE (2), buy OUT_OF_STOCK (2), swap OUT_OF_STOCK (3).
    const tasks = generateTasks({ seed: 1, count: 4, split: "train" });
    const stats = taskStats(tasks);
    expect(stats.tasks).toBe(4);
    expect(stats.families).toEqual({ buy: 1, cancel: 0, pay: 1, swap: 2 });
    expect(stats.outcomes).toEqual({ ok: 1, NOT_FOUND: 0, ITEM_LOCKED: 0, OUT_OF_STOCK: 2, LOW_BALANCE: 1, WRONG_STATE: 0 });
    expect(stats.calls).toEqual({ min: 2, max: 5, mean: 3, histogram: { 2: 2, 3: 1, 5: 1 } });
    expect(stats.failingPreconditionFraction).toBe(0.75);
    expect(stats.writeCallFraction).toBe(2 / 12);
    const lengths = tasks.map((t) => renderPlain(t.reference!).length);
    expect(stats.chars).toEqual({ min: Math.min(...lengths), max: Math.max(...lengths), mean: lengths.reduce((a, b) => a + b) / 4 });
    expect(stats.charsWithoutSystem.max).toBe(stats.chars.max - "system: ".length - SYSTEM_PROMPT.length - 1);
  });

  it("is empty-safe", () => {
    expect(taskStats([])).toMatchObject({ tasks: 0, failingPreconditionFraction: 0, calls: { min: 0, max: 0, mean: 0 } });
  });
});

describe("size budget", () => {
  it(`keeps every gold dialogue within ${GOLD_CHAR_BUDGET} characters (plain rendering, system prompt included)`, () => {
    const tasks = [...generateTasks({ seed: 99, count: 1000, split: "train" }), ...generateTasks({ seed: 99, count: 1000, split: "test" })];
    const stats = taskStats(tasks);
    expect(stats.chars.max).toBeLessThanOrEqual(GOLD_CHAR_BUDGET);
    expect(stats.calls.min).toBeGreaterThanOrEqual(2);
    expect(stats.calls.max).toBeLessThanOrEqual(6);
    expect(stats.failingPreconditionFraction).toBeGreaterThan(0.35);
    expect(stats.failingPreconditionFraction).toBeLessThan(0.45);
  });
});
