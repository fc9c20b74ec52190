import * as tf from "@tensorflow/tfjs-core";
import { describe, expect, it } from "vitest";
import type { Datum } from "./backend.js";
import { defaultAdamParams } from "./backend.js";
import { InProcessBackend } from "./in-process.js";
import { initWasmBackend } from "./wasm.js";

const config = { vocabSize: 64, hiddenSize: 32, intermediateSize: 64, numLayers: 2, numHeads: 2, maxPositionEmbeddings: 128 };

function data(length: number): Datum[] {
  return [0, 1, 2].map((b) => {
    const full = Array.from({ length: length + b + 1 }, (_, i) => (i * 7 + b) % 64);
    const mask = full.slice(1).map(() => 1);
    return { tokens: full.slice(0, -1), targetTokens: full.slice(1), logprobs: mask.map(() => -4), advantages: mask.map(() => 0.3), mask };
  });
}

describe("wasm heap use", () => {
  it("stays flat across steps and returns to nothing after dispose", async () => {
    await initWasmBackend();
    const baseline = tf.memory().numTensors;
    const backend = await InProcessBackend.create(config, { seed: 1 });
    const loss = {
      type: "grpo" as const,
      config: { epsLow: 0.2, epsHigh: 0.2, dualClip: 3, klCoef: 0, entropyCoef: 0.01, aggregation: "token-mean" as const },
    };
    const counts: number[] = [];
    for (const length of [10, 100, 10, 100]) {
      await backend.forwardBackward(data(length), loss);
      await backend.accumulatedGradients();
      await backend.optimStep(defaultAdamParams);
      await backend.forward(data(length));
      const sampler = await backend.saveWeightsForSampler();
      await Promise.all([sampler.sample([1, 2, 3], { maxTokens: 4 }), sampler.sample(data(40)[0]!.tokens, { maxTokens: 4 })]);
      // The sampler releases its weights once idle, one turn of the event loop after its last result.
      await new Promise((resolve) => setTimeout(resolve, 20));
      counts.push(tf.memory().numTensors);
    }
    // After both lengths have been seen (each caches its rotary tables and mask), nothing grows.
    expect(counts.slice(1)).toEqual([counts[1], counts[1], counts[1]]);
    backend.dispose();
    expect(tf.memory().numTensors).toBe(baseline);
  });
});
