import { describe, expect, it } from "vitest";
import { adamwStep, freshAdamState } from "./adamw.js";
import { defaultAdamParams } from "./backend.js";

describe("adamwStep", () => {
  const adam = { learningRate: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.5, gradClipNorm: 0 };

  it("takes the bias-corrected Adam step with decoupled decay on matrices, not on norm gains", () => {
    const params = new Map([
      ["w", Float32Array.from([1, -2])],
      ["model.norm.weight", Float32Array.from([1])],
    ]);
    const state = freshAdamState(params);
    adamwStep(params, new Map([["w", Float32Array.from([0.3, -0.4])], ["model.norm.weight", Float32Array.from([2])]]), state, adam);
    // Step 1: m̂ = g, v̂ = g², so the update is lr·sign(g); decay multiplies by 1 − lr·wd = 0.95.
    expect(params.get("w")![0]).toBeCloseTo(1 * 0.95 - 0.1, 6);
    expect(params.get("w")![1]).toBeCloseTo(-2 * 0.95 + 0.1, 6);
    expect(params.get("model.norm.weight")![0]).toBeCloseTo(1 - 0.1, 6);
    expect(state.step).toBe(1);
    expect(state.m.get("w")![0]).toBeCloseTo(0.03, 7);
    expect(state.v.get("w")![1]).toBeCloseTo(0.01 * 0.16, 9);
  });

  it("clips the global gradient norm like PyTorch's clip_grad_norm_", () => {
    const params = new Map([["w", Float32Array.from([0, 0])]]);
    const state = freshAdamState(params);
    const metrics = adamwStep(params, new Map([["w", Float32Array.from([3, 4])]]), state, { ...adam, weightDecay: 0, gradClipNorm: 1 });
    expect(metrics["grad_norm:mean"]).toBe(5);
    expect(metrics["grad_clip_scale:mean"]).toBeCloseTo(1 / (5 + 1e-6), 12);
    expect(state.m.get("w")![0]).toBeCloseTo(0.1 * 3 * (1 / (5 + 1e-6)), 7);
  });

  it("refuses invalid parameters and non-finite gradients without touching the weights", () => {
    const params = new Map([["w", Float32Array.from([1])]]);
    const state = freshAdamState(params);
    expect(() => adamwStep(params, new Map([["w", Float32Array.from([1])]]), state, { ...defaultAdamParams, beta1: 1 })).toThrow(/beta1 must be in \[0, 1\)/);
    expect(() => adamwStep(params, new Map([["w", Float32Array.from([Number.NaN])]]), state, defaultAdamParams)).toThrow(/not finite/);
    expect(params.get("w")![0]).toBe(1);
    expect(state.step).toBe(0);
  });
});
