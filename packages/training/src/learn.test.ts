import { describe, expect, it } from "vitest";
import type { Datum } from "./backend.js";
import { defaultAdamParams } from "./backend.js";
import { createTinyModel } from "./in-process.js";
import { Rng } from "./rng.js";

/** Copy task: `0 s₁ … s₄ 1 s₁ … s₄`, trained and scored on the copy only. */
function copyDatum(rng: Rng): Datum {
  const seq = Array.from({ length: 4 }, () => 2 + (rng.nextUint32() % 14));
  const full = [0, ...seq, 1, ...seq];
  const mask = full.slice(1).map((_, t) => (t >= seq.length + 1 ? 1 : 0));
  return { tokens: full.slice(0, -1), targetTokens: full.slice(1), mask, logprobs: mask.map(() => 0), advantages: mask.map(() => 0) };
}

describe("the in-process model", () => {
  it("learns to copy: held-out loss below 0.1 nats per copied token, greedy copies exact", async () => {
    const model = await createTinyModel(
      { vocabSize: 16, hiddenSize: 64, intermediateSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 32 },
      { seed: 1 },
    );
    const train = Rng.fromSeed(1);
    const heldOut = Array.from({ length: 32 }, () => copyDatum(Rng.fromSeed(10_000 + train.nextUint32())));
    const lossPerToken = async () => {
      const logprobs = await model.forward(heldOut);
      let total = 0;
      let count = 0;
      heldOut.forEach((d, i) =>
        d.mask.forEach((m, t) => {
          total -= m * logprobs[i]![t]!;
          count += m;
        }),
      );
      return total / count;
    };
    const before = await lossPerToken();
    for (let step = 0; step < 80; step++) {
      await model.forwardBackward(
        Array.from({ length: 16 }, () => copyDatum(train)),
        { type: "cross_entropy" },
      );
      await model.optimStep({ ...defaultAdamParams, learningRate: 1e-2 });
    }
    const after = await lossPerToken();
    expect(before).toBeGreaterThan(2);
    expect(after).toBeLessThan(0.1);

    const sampler = await model.saveWeightsForSampler();
    const outputs = await Promise.all(heldOut.map((d) => sampler.sample(d.tokens.slice(0, 6), { maxTokens: 4, temperature: 0 })));
    const exact = outputs.filter((out, i) => out.tokens.join() === heldOut[i]!.targetTokens.slice(5).join()).length;
    expect(exact).toBeGreaterThanOrEqual(30);
    model.dispose();
  }, 60_000);
});
