import { describe, expect, it } from "vitest";
import { cispoSum, droSum } from "./sum-losses.js";

describe("cispo", () => {
  it("weighs each log-probability by its clipped ratio, held constant (hand-computed)", () => {
    // Ratios 1.5 (inside [0, 4]), 5 (clipped to 4) and a masked position.
    const lp = [-1 + Math.log(1.5), -1 + Math.log(5), -7];
    const row = { logprobs: lp, samplerLogprobs: [-1, -1, -2], advantages: [2, -1, 3], mask: [1, 1, 0] };
    const result = cispoSum([row], 0, 4);
    // −(1.5·lp0·2 + 4·lp1·(−1))
    expect(result.loss).toBeCloseTo(-(1.5 * lp[0]! * 2 + 4 * lp[1]! * -1), 12);
    expect(result.loss).toBeCloseTo(4.2213563255, 9);
    // The weight is not differentiated: ∂/∂lp = −weight·A, clipped or not.
    expect(result.gradLogprobs[0]).toEqual([-3, 4, 0]);
  });

  it("raises a small ratio to clipLow", () => {
    const row = { logprobs: [Math.log(0.5)], samplerLogprobs: [0], advantages: [1], mask: [1] };
    const result = cispoSum([row], 0.8, 1.2);
    expect(result.gradLogprobs[0]![0]).toBeCloseTo(-0.8, 12);
    expect(result.loss).toBeCloseTo(-0.8 * Math.log(0.5), 12);
  });
});

describe("dro", () => {
  it("is −Σ(lp·A − ½β(lp − lq)²) with gradient −(A − β(lp − lq)) (hand-computed)", () => {
    const row = { logprobs: [-1, -0.5, -3], samplerLogprobs: [-2, -0.5, -1], advantages: [1, -2, 5], mask: [1, 1, 0] };
    const result = droSum([row], 0.5);
    // Position 0: lp·A = −1, penalty ½·0.5·1² = 0.25 → objective −1.25. Position 1: 1 − 0 = 1. Loss = −(−0.25).
    expect(result.loss).toBeCloseTo(0.25, 12);
    expect(result.gradLogprobs[0]).toEqual([-0.5, 2, 0]);
  });

  it("has the gradient of its loss (central differences)", () => {
    const base = { samplerLogprobs: [-1.2, -0.3], advantages: [0.7, -1.1], mask: [1, 0.5] };
    const lp = [-0.9, -0.6];
    const h = 1e-6;
    const grad = droSum([{ ...base, logprobs: lp }], 0.3).gradLogprobs[0]!;
    lp.forEach((_, t) => {
      const up = lp.map((x, i) => (i === t ? x + h : x));
      const down = lp.map((x, i) => (i === t ? x - h : x));
      const numeric = (droSum([{ ...base, logprobs: up }], 0.3).loss - droSum([{ ...base, logprobs: down }], 0.3).loss) / (2 * h);
      expect(grad[t]).toBeCloseTo(numeric, 6);
    });
  });
});
