import { describe, expect, it } from "vitest";
import { binomial, passHatK, passHatKs } from "./pass-hat-k.js";

describe("pass^k", () => {
  it("is C(successes, k) / C(trials, k)", () => {
    expect(binomial(4, 2)).toBe(6);
    expect(passHatK(4, 2, 1)).toBe(0.5);
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 12);
    expect(passHatK(4, 4, 4)).toBe(1);
    expect(passHatK(4, 3, 4)).toBe(0);
    expect(() => passHatK(2, 1, 3)).toThrow(/at least 3 trials/);
  });

  it("averages over tasks up to the fewest trials any task has", () => {
    const outcomes = [
      { taskId: "a", success: true },
      { taskId: "a", success: true },
      { taskId: "b", success: true },
      { taskId: "b", success: false },
      { taskId: "c", success: false },
      { taskId: "c", success: false },
      { taskId: "c", success: true },
    ];
    const result = passHatKs(outcomes);
    expect(Object.keys(result)).toEqual(["1", "2"]);
    expect(result[1]).toBeCloseTo((1 + 0.5 + 1 / 3) / 3, 12);
    expect(result[2]).toBeCloseTo((1 + 0 + 0) / 3, 12);
  });
});
