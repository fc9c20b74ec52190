import { describe, expect, it } from "vitest";
import { TinyModelConfig } from "./config.js";
import { InProcessBackend } from "./in-process.js";
import { initParameters } from "./parameters.js";
import { Rng, seededRandom } from "./rng.js";
import { TrainingInputError } from "./errors.js";
import { TinySampler } from "./sampler.js";
import { sampleToken } from "./sampling.js";

const sampling = { temperature: 1, topP: 1, topK: 0 };

function frequencies(logits: number[], params: typeof sampling, draws: number): number[] {
  const rng = Rng.fromSeed(1);
  const counts = logits.map(() => 0);
  for (let i = 0; i < draws; i++) counts[sampleToken(logits, params, () => rng.next()).token]! += 1;
  return counts.map((c) => c / draws);
}

describe("sampleToken", () => {
  // Probabilities 1/6, 2/6, 3/6 at temperature 1.
  const logits = [0, Math.log(2), Math.log(3)];

  it("draws from softmax(logits) and reports the log-probability of the draw", () => {
    const rng = Rng.fromSeed(2);
    for (let i = 0; i < 50; i++) {
      const { token, logprob } = sampleToken(logits, sampling, () => rng.next());
      expect(logprob).toBeCloseTo(Math.log((token + 1) / 6), 12);
    }
    const freq = frequencies(logits, sampling, 30_000);
    [1 / 6, 2 / 6, 3 / 6].forEach((p, i) => expect(freq[i]).toBeCloseTo(p, 2));
  });

  it("reports log-probabilities under the temperature-scaled distribution actually sampled", () => {
    // At temperature 2 the weights are √1 : √2 : √3.
    const z = 1 + Math.SQRT2 + Math.sqrt(3);
    const { token, logprob } = sampleToken(logits, { ...sampling, temperature: 2 }, seededRandom(3));
    expect(logprob).toBeCloseTo(Math.log(Math.sqrt(token + 1) / z), 12);
  });

  it("keeps the smallest nucleus whose mass reaches top-p, renormalised", () => {
    // Sorted: 3/6, 2/6, 1/6. top-p 0.5 keeps the first token only; 0.6 keeps two.
    expect(frequencies(logits, { ...sampling, topP: 0.5 }, 200)).toEqual([0, 0, 1]);
    const rng = Rng.fromSeed(4);
    for (let i = 0; i < 50; i++) {
      const { token, logprob } = sampleToken(logits, { ...sampling, topP: 0.6 }, () => rng.next());
      expect(token).toBeGreaterThan(0);
      expect(logprob).toBeCloseTo(Math.log((token + 1) / 5), 12);
    }
  });

  it("keeps the top-k tokens", () => {
    const freq = frequencies(logits, { ...sampling, topK: 2 }, 20_000);
    expect(freq[0]).toBe(0);
    expect(freq[2]).toBeCloseTo(3 / 5, 1);
  });

  it("decodes greedily at temperature 0, a point mass with log-probability 0", () => {
    expect(sampleToken([0.1, 2, -1], { ...sampling, temperature: 0 }, seededRandom(5))).toEqual({ token: 1, logprob: 0 });
  });
});

describe("TinySampler", () => {
  const config = TinyModelConfig.parse({
    vocabSize: 29,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 2,
    numHeads: 2,
    maxPositionEmbeddings: 48,
    initializerRange: 0.3,
  });
  const params = initParameters(config, 11);
  const prompt = [3, 1, 4, 1, 5, 9, 2, 6, 5];

  it.each([0.5, 0.7, 1.3])(
    "at temperature %f, the learner scoring at the same temperature gives a policy ratio of 1 on the first minibatch",
    async (temperature) => {
      const sampler = new TinySampler(config, params, { stopTokenIds: [] });
      const out = await sampler.sample(prompt, { maxTokens: 12, seed: 5, temperature });
      const full = [...prompt, ...out.tokens];
      const n = full.length - 1;
      const mask = Array.from({ length: n }, (_, i) => (i >= prompt.length - 1 ? 1 : 0));
      const datum = {
        tokens: full.slice(0, -1),
        targetTokens: full.slice(1),
        logprobs: mask.map((m, i) => (m ? out.logprobs[i - (prompt.length - 1)]! : 0)),
        advantages: mask.map((m) => m * 0.5),
        mask,
      };
      const backend = await InProcessBackend.fromParameters(config, params);
      const loss = { type: "grpo" as const, config: { epsLow: 0.2, epsHigh: 0.2, dualClip: 3, klCoef: 0, entropyCoef: 0, aggregation: "token-mean" as const } };
      const tempered = await backend.forwardBackward([datum], loss, { temperature });
      expect(tempered.metrics["ratio:min"]).toBeCloseTo(1, 4);
      expect(tempered.metrics["ratio:max"]).toBeCloseTo(1, 4);
      expect(tempered.metrics["sampler_kl:mean"]).toBeCloseTo(0, 5);
      // Scoring the raw model instead (what the learner did before) is off from the first token.
      const raw = await backend.forwardBackward([datum], loss);
      expect(Math.abs(raw.metrics["ratio:max"]! - 1) + Math.abs(raw.metrics["ratio:min"]! - 1)).toBeGreaterThan(0.01);
      backend.dispose();
    },
  );

  it("reports the learner's log-probabilities at temperature 1", async () => {
    const sampler = new TinySampler(config, params, { stopTokenIds: [] });
    const out = await sampler.sample(prompt, { maxTokens: 12, seed: 1 });
    expect(out.tokens).toHaveLength(12);
    expect(out.finishReason).toBe("length");
    const backend = await InProcessBackend.fromParameters(config, params);
    const full = [...prompt, ...out.tokens];
    const [learner] = await backend.forward([{ tokens: full.slice(0, -1), targetTokens: full.slice(1), logprobs: [], advantages: [], mask: [] }]);
    out.logprobs.forEach((lp, t) => expect(lp).toBeCloseTo(learner![prompt.length - 1 + t]!, 4));
    backend.dispose();
  });

  it("is deterministic given a seed, whatever runs alongside", async () => {
    const sampler = new TinySampler(config, params, { stopTokenIds: [] });
    const alone = await sampler.sample(prompt, { maxTokens: 10, seed: 7 });
    const [together] = await Promise.all([
      sampler.sample(prompt, { maxTokens: 10, seed: 7 }),
      sampler.sample([2, 7, 1, 8], { maxTokens: 15, seed: 8 }),
      sampler.sample([1], { maxTokens: 3, seed: 9 }),
    ]);
    expect(together).toEqual(alone);
    const other = await sampler.sample(prompt, { maxTokens: 10, seed: 8 });
    expect(other.tokens).not.toEqual(alone.tokens);
  });

  it("stops at a stop token (kept in the output) or a stop string", async () => {
    const everyToken = Array.from({ length: config.vocabSize }, (_, i) => i);
    const stopped = await new TinySampler(config, params, { stopTokenIds: everyToken }).sample(prompt, { maxTokens: 10, seed: 1 });
    expect(stopped.finishReason).toBe("stop");
    expect(stopped.tokens).toHaveLength(1);

    const letters = { decode: (tokens: readonly number[]) => tokens.map((t) => String.fromCharCode(97 + (t % 26))).join("") };
    const free = await new TinySampler(config, params, { stopTokenIds: [] }).sample(prompt, { maxTokens: 20, seed: 3 });
    const target = letters.decode(free.tokens.slice(4, 6));
    const withString = await new TinySampler(config, params, { stopTokenIds: [], tokenizer: letters }).sample(prompt, {
      maxTokens: 20,
      seed: 3,
      stop: [target],
    });
    expect(withString.finishReason).toBe("stop");
    expect(letters.decode(withString.tokens)).toContain(target);
    expect(withString.tokens.length).toBeLessThanOrEqual(6);
  });

  it("ends at the model's context, and on abort", async () => {
    const sampler = new TinySampler(config, params, { stopTokenIds: [] });
    const long = await sampler.sample(prompt, { maxTokens: 1000, seed: 1 });
    expect(long.finishReason).toBe("length");
    expect(prompt.length + long.tokens.length).toBe(config.maxPositionEmbeddings);
    const controller = new AbortController();
    const pending = sampler.sample(prompt, { maxTokens: 30, seed: 1 }, controller.signal);
    controller.abort();
    expect((await pending).finishReason).toBe("abort");
  });

  it("refuses prompts it cannot condition on, saying why", async () => {
    const sampler = new TinySampler(config, params);
    await expect(sampler.sample([], {})).rejects.toThrow(/promptTokens is empty/);
    await expect(sampler.sample([], {})).rejects.toBeInstanceOf(TrainingInputError);
    await expect(sampler.sample([1, 99], {})).rejects.toThrow(/promptTokens\[1\] = 99 is not a token id/);
    await expect(sampler.sample([1], { stop: ["x"] })).rejects.toThrow(/stop strings need a tokenizer/);
    await expect(sampler.sample([1], { temperature: -1 })).rejects.toThrow(/temperature/);
  });
});
