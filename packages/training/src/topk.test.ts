import { describe, expect, it } from "vitest";
import { topkLogprobs } from "./topk.js";

describe("topkLogprobs", () => {
  // Logits ln 1, ln 2, ln 4, ln 1: probabilities 1/8, 2/8, 4/8, 1/8.
  const logits = [0, Math.log(2), Math.log(4), 0];

  it("gives the k most likely tokens best first with log-softmax values", () => {
    const top = topkLogprobs(logits, 2);
    expect(top.map(([t]) => t)).toEqual([2, 1]);
    expect(top[0]![1]).toBeCloseTo(Math.log(4 / 8), 12);
    expect(top[1]![1]).toBeCloseTo(Math.log(2 / 8), 12);
  });

  it("breaks ties by the lower token id and clips k to the vocabulary", () => {
    const all = topkLogprobs(logits, 10);
    expect(all.map(([t]) => t)).toEqual([2, 1, 0, 3]);
    expect(all[2]![1]).toBeCloseTo(Math.log(1 / 8), 12);
    expect(all[3]![1]).toBeCloseTo(Math.log(1 / 8), 12);
  });

  it("selects among many tokens the same way as a full sort", () => {
    // 100 logits with repeats (j mod 7), so ties are frequent: the best are the 6s, lowest ids first.
    const many = Array.from({ length: 100 }, (_, j) => j % 7);
    expect(topkLogprobs(many, 3).map(([t]) => t)).toEqual([6, 13, 20]);
    const lse = Math.log(many.reduce((s, z) => s + Math.exp(z), 0));
    expect(topkLogprobs(many, 3)[0]![1]).toBeCloseTo(6 - lse, 12);
  });
});
