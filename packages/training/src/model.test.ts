import { crossEntropySum, importanceSamplingSum, policyLoss, ppoSum, type LossAggregation, type PolicyLossConfig } from "@envace/grpo";
import { describe, expect, it } from "vitest";
import type { Datum, LossFn } from "./backend.js";
import { TinyModelConfig } from "./config.js";
import { InProcessBackend } from "./in-process.js";
import { initParameters, type Parameters } from "./parameters.js";
import { referenceScores } from "./reference.js";
import { Rng } from "./rng.js";

const config = TinyModelConfig.parse({
  vocabSize: 23,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 2,
  maxPositionEmbeddings: 64,
  // Larger than usual so the logits (and every gradient path) are far from trivial.
  initializerRange: 0.3,
});

function randomTokens(rng: Rng, n: number): number[] {
  return Array.from({ length: n }, () => rng.nextUint32() % config.vocabSize);
}

/** Three sequences of different lengths, with masks that leave a prompt out. */
function makeData(seed: number): Datum[] {
  const rng = Rng.fromSeed(seed);
  return [5, 11, 17].map((n, i) => {
    const full = randomTokens(rng, n + 1);
    const prompt = 2 + i;
    const mask = full.slice(1).map((_, t) => (t >= prompt ? 1 : 0));
    return {
      tokens: full.slice(0, -1),
      targetTokens: full.slice(1),
      logprobs: mask.map(() => 0),
      advantages: mask.map((m) => (m ? (i === 1 ? -0.7 : 1.3) : 0)),
      mask,
    };
  });
}

/** Give `data` sampler and reference log-probabilities near the model's own, so ratios straddle the clip range. */
function withSamplerLogprobs(data: Datum[], learner: number[][], seed: number): Datum[] {
  const rng = Rng.fromSeed(seed);
  return data.map((d, i) => ({
    ...d,
    logprobs: d.mask.map((m, t) => (m ? learner[i]![t]! + (rng.next() - 0.5) * 0.6 : 0)),
    refLogprobs: d.mask.map((_, t) => learner[i]![t]! + (rng.next() - 0.5) * 0.4),
  }));
}

function grpo(aggregation: LossAggregation): LossFn {
  const loss: PolicyLossConfig = { epsLow: 0.2, epsHigh: 0.28, dualClip: 3, klCoef: 0.05, entropyCoef: 0.02, aggregation };
  return { type: "grpo", config: loss };
}

function perturbed(params: Parameters, direction: Parameters, eps: number): Parameters {
  return new Map([...params].map(([name, p]) => [name, p.map((v, i) => v + eps * (direction.get(name)?.[i] ?? 0))]));
}

function dot(a: Parameters, b: Parameters): number {
  let s = 0;
  for (const [name, x] of a) {
    const y = b.get(name);
    if (y) for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  }
  return s;
}

/** A random unit direction over the named tensors only. */
function direction(params: Parameters, names: readonly string[], rng: Rng): Parameters {
  const d: Parameters = new Map(names.map((name) => [name, params.get(name)!.map(() => rng.normal())]));
  const norm = Math.sqrt(dot(d, d));
  for (const x of d.values()) for (let i = 0; i < x.length; i++) x[i]! /= norm;
  return d;
}

const kernels = ["per-head", "batched"] as const;

describe("the tiny transformer", () => {
  const params = initParameters(config, 7);

  it.each(kernels)("computes the same log-probabilities as the float64 reference forward pass (%s attention)", async (attentionKernel) => {
    const backend = await InProcessBackend.fromParameters(config, params, { attentionKernel });
    const data = makeData(1);
    const logprobs = await backend.forward(data);
    data.forEach((d, i) => {
      const ref = referenceScores(config, params, d.tokens, d.targetTokens);
      logprobs[i]!.forEach((lp, t) => expect(lp).toBeCloseTo(ref.logprobs[t]!, 4));
    });
    backend.dispose();
  });

  it.each(["token-mean", "seq-mean-token-mean", "seq-sum"] as const)("reports the @envace/grpo reference loss for %s aggregation", async (aggregation) => {
    const backend = await InProcessBackend.fromParameters(config, params, { microbatchTokens: 16 });
    const base = makeData(2);
    const ref = base.map((d) => referenceScores(config, params, d.tokens, d.targetTokens));
    const data = withSamplerLogprobs(
      base,
      ref.map((r) => r.logprobs),
      3,
    );
    const loss = grpo(aggregation);
    const result = await backend.forwardBackward(data, loss);
    const expected = policyLoss(
      data.map((d, i) => ({
        logprobs: ref[i]!.logprobs,
        samplerLogprobs: d.logprobs,
        advantages: d.advantages,
        mask: d.mask,
        refLogprobs: d.refLogprobs!,
        entropy: ref[i]!.entropies,
      })),
      (loss as { config: PolicyLossConfig }).config,
    );
    expect(result.loss).toBeCloseTo(expected.loss, 5);
    expect(result.metrics["clip_fraction:mean"]).toBeCloseTo(expected.diagnostics.clipFraction, 6);
    expect(result.metrics["entropy:mean"]).toBeCloseTo(expected.diagnostics.entropy!, 4);
    // Some tokens must sit in each regime for the comparison to mean anything.
    expect(expected.diagnostics.clipFraction).toBeGreaterThan(0);
    expect(expected.diagnostics.clipFraction).toBeLessThan(1);
    backend.dispose();
  });

  it.each([...kernels.map((k) => [k, 1] as const), ["per-head", 0.7] as const])(
    "passes a finite-difference check of the GRPO loss gradient, tensor by tensor (%s attention, temperature %f)",
    async (attentionKernel, temperature) => {
      const base = makeData(4);
      const probe = await InProcessBackend.fromParameters(config, params);
      const data = withSamplerLogprobs(base, await probe.forward(base, { temperature }), 5);
      probe.dispose();
      const loss = grpo("seq-mean-token-mean");
      // Micro-batches of one sequence each, so the split of the aggregation is covered too.
      const lossAt = async (p: Parameters) => {
        const backend = await InProcessBackend.fromParameters(config, p, { microbatchTokens: 16, attentionKernel });
        const { loss: value } = await backend.forwardBackward(data, loss, { temperature });
        backend.dispose();
        return value;
      };
      const backend = await InProcessBackend.fromParameters(config, params, { microbatchTokens: 16, attentionKernel });
      await backend.forwardBackward(data, loss, { temperature });
      const grads = (await backend.accumulatedGradients())!;
      backend.dispose();

      const rng = Rng.fromSeed(6);
      const groups = [...params.keys()].map((name) => [name]);
      groups.push([...params.keys()]);
      const eps = 1e-2;
      for (const names of groups) {
        const d = direction(params, names, rng);
        const analytic = dot(grads, d);
        const numeric = ((await lossAt(perturbed(params, d, eps))) - (await lossAt(perturbed(params, d, -eps)))) / (2 * eps);
        const label = `${names.length === 1 ? names[0] : "all parameters"}: analytic ${analytic}, numeric ${numeric}`;
        expect(Math.abs(analytic - numeric), label).toBeLessThan(5e-3 * Math.abs(numeric) + 2e-5);
      }
    },
    30_000,
  );

  it.each([
    ["importance_sampling", { type: "importance_sampling" } as const],
    ["ppo", { type: "ppo", clipLow: 0.8, clipHigh: 1.2 } as const],
  ])("computes Tinker's %s sum and its gradient", async (_, loss) => {
    const base = makeData(10);
    const ref = base.map((d) => referenceScores(config, params, d.tokens, d.targetTokens));
    const data = withSamplerLogprobs(
      base,
      ref.map((r) => r.logprobs),
      11,
    );
    const rows = data.map((d, i) => ({ logprobs: ref[i]!.logprobs, samplerLogprobs: d.logprobs, advantages: d.advantages, mask: d.mask }));
    const expected = loss.type === "ppo" ? ppoSum(rows, loss.clipLow, loss.clipHigh) : importanceSamplingSum(rows);
    const lossAt = async (p: Parameters) => {
      const backend = await InProcessBackend.fromParameters(config, p);
      const result = await backend.forwardBackward(data, loss);
      const grads = await backend.accumulatedGradients();
      backend.dispose();
      return { value: result.loss, grads: grads! };
    };
    const { value, grads } = await lossAt(params);
    expect(value).toBeCloseTo(expected.loss, 5);
    const d = direction(params, [...params.keys()], Rng.fromSeed(12));
    const eps = 1e-2;
    const numeric = ((await lossAt(perturbed(params, d, eps))).value - (await lossAt(perturbed(params, d, -eps))).value) / (2 * eps);
    expect(Math.abs(dot(grads, d) - numeric)).toBeLessThan(5e-3 * Math.abs(numeric) + 2e-5);
  });

  it("refuses bad data before touching the gradients accumulated so far", async () => {
    const backend = await InProcessBackend.fromParameters(config, params);
    const data = makeData(13);
    await backend.forwardBackward(data, { type: "cross_entropy" });
    const before = await backend.accumulatedGradients();
    await expect(backend.forwardBackward(data, grpo("token-mean"))).rejects.toThrow(/data\[0\] has no refLogprobs, which the KL term \(klCoef 0.05\) needs/);
    await expect(backend.forwardBackward([{ ...data[0]!, targetTokens: [1] }], { type: "cross_entropy" })).rejects.toThrow(
      /data\[0\]\.targetTokens has 1 entries, tokens has 5/,
    );
    await expect(backend.forwardBackward([{ ...data[0]!, tokens: data[0]!.tokens.map(() => 99) }], { type: "cross_entropy" })).rejects.toThrow(
      /data\[0\]\.tokens\[0\] = 99 is not a token id \(0\.\.22\)/,
    );
    expect(await backend.accumulatedGradients()).toEqual(before);
    backend.dispose();
  });

  it("adds up gradients across calls, and micro-batching does not change them", async () => {
    const data = makeData(8);
    const whole = await InProcessBackend.fromParameters(config, params, { microbatchTokens: 4096 });
    const split = await InProcessBackend.fromParameters(config, params, { microbatchTokens: 8 });
    const r = await whole.forwardBackward(data, { type: "cross_entropy" });
    await split.forwardBackward(data.slice(0, 1), { type: "cross_entropy" });
    await split.forwardBackward(data.slice(1), { type: "cross_entropy" });
    const expected = crossEntropySum(data.map((d, i) => ({ logprobs: r.logprobs[i]!, mask: d.mask })));
    expect(r.loss).toBeCloseTo(expected.loss, 4);
    const a = (await whole.accumulatedGradients())!;
    const b = (await split.accumulatedGradients())!;
    for (const [name, g] of a) {
      const h = b.get(name)!;
      const scale = Math.max(...g.map(Math.abs));
      g.forEach((v, i) => expect(Math.abs(v - h[i]!)).toBeLessThan(1e-4 * scale + 1e-7));
    }
    whole.dispose();
    split.dispose();
  });
});
