import { describe, expect, it } from "vitest";
import { sampleTasks } from "./sample.js";

describe("sampleTasks", () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  it("walks a seeded permutation, every task once per pass", () => {
    const pass = [1, 2, 3, 4, 5].flatMap((step) => sampleTasks(items, 2, 7, step));
    expect([...pass].sort((a, b) => a - b)).toEqual(items);
    expect(sampleTasks(items, 2, 7, 3)).toEqual(sampleTasks(items, 2, 7, 3));
    expect(pass).not.toEqual(items);
  });

  it("never repeats a task within a step, even where a step crosses from one pass to the next", () => {
    // 10 tasks at 4 a step: every fifth step straddles two passes (30 of 500 repeated a task before).
    const counts = new Array<number>(10).fill(0);
    for (let step = 1; step <= 500; step++) {
      const drawn = sampleTasks(items, 4, 1, step);
      expect(drawn).toHaveLength(4);
      expect(new Set(drawn).size).toBe(4);
      for (const i of drawn) counts[i]! += 1;
    }
    // Deferring a repeat by one step keeps the passes even: 2,000 draws, 200 a task.
    for (const c of counts) expect(Math.abs(c - 200)).toBeLessThanOrEqual(1);
  });

  it("draws every task as often as fits when a step wants more tasks than there are", () => {
    const five = [0, 1, 2, 3, 4];
    for (const step of [1, 2, 3]) {
      const drawn = sampleTasks(five, 16, 1, step);
      expect(drawn).toHaveLength(16);
      const counts = five.map((i) => drawn.filter((d) => d === i).length);
      expect(counts.every((c) => c === 3 || c === 4)).toBe(true);
      expect(counts.filter((c) => c === 4)).toHaveLength(1);
    }
    expect(sampleTasks(five, 5, 1, 9).sort()).toEqual(five);
  });
});
