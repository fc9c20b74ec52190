import * as tf from "@tensorflow/tfjs-core";
import { beforeAll, describe, expect, it } from "vitest";
import { adamwStep, freshAdamState } from "./adamw.js";
import { defaultAdamParams } from "./backend.js";
import { decays } from "./device-weights.js";
import { initWasmBackend } from "./wasm.js";

const tensors = (entries: Record<string, number[]>) => new Map(Object.entries(entries).map(([name, values]) => [name, tf.tensor1d(values)]));
const values = (map: Map<string, tf.Tensor>, name: string) => Array.from(map.get(name)!.dataSync());

describe("adamwStep", () => {
  beforeAll(() => initWasmBackend());
  const adam = { learningRate: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.5, gradClipNorm: 0 };

  it("takes the bias-corrected Adam step with decoupled decay on matrices, not on norm gains", () => {
    const params = tensors({ "layer0.o": [1, -2], finalNorm: [1] });
    const state = freshAdamState(params);
    adamwStep(params, tensors({ "layer0.o": [0.3, -0.4], finalNorm: [2] }), state, adam, decays);
    // Step 1: m̂ = g and v̂ = g², so the update is lr·sign(g); the decay multiplies by 1 − lr·wd = 0.95.
    const [w0, w1] = values(params, "layer0.o");
    expect(w0).toBeCloseTo(1 * 0.95 - 0.1, 6);
    expect(w1).toBeCloseTo(-2 * 0.95 + 0.1, 6);
    expect(values(params, "finalNorm")[0]).toBeCloseTo(1 - 0.1, 6);
    expect(state.step).toBe(1);
    expect(values(state.m, "layer0.o")[0]).toBeCloseTo(0.03, 7);
    expect(values(state.v, "layer0.o")[1]).toBeCloseTo(0.01 * 0.16, 9);
  });

  it("clips the global gradient norm like PyTorch's clip_grad_norm_", () => {
    const params = tensors({ w: [0, 0] });
    const state = freshAdamState(params);
    const metrics = adamwStep(params, tensors({ w: [3, 4] }), state, { ...adam, weightDecay: 0, gradClipNorm: 1 }, decays);
    expect(metrics["grad_norm:mean"]).toBe(5);
    expect(metrics["grad_clip_scale:mean"]).toBeCloseTo(1 / (5 + 1e-6), 12);
    expect(values(state.m, "w")[0]).toBeCloseTo(0.1 * 3 * (1 / (5 + 1e-6)), 7);
  });

  it("refuses invalid parameters and non-finite gradients without touching the weights", () => {
    const params = tensors({ w: [1] });
    const state = freshAdamState(params);
    expect(() => adamwStep(params, tensors({ w: [1] }), state, { ...defaultAdamParams, beta1: 1 }, decays)).toThrow(/beta1 must be in \[0, 1\)/);
    expect(() => adamwStep(params, tensors({ w: [Number.NaN] }), state, defaultAdamParams, decays)).toThrow(/not finite/);
    expect(values(params, "w")[0]).toBe(1);
    expect(state.step).toBe(0);
  });
});
