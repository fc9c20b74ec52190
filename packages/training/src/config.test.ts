import { describe, expect, it } from "vitest";
import { fromHfConfig, TinyModelConfig, toHfConfig } from "./config.js";
import { countParameters } from "./parameters.js";
import { Rng } from "./rng.js";

const sizes = { vocabSize: 1024, hiddenSize: 192, intermediateSize: 512, numLayers: 4, numHeads: 6 };

describe("TinyModelConfig", () => {
  it("round-trips through a Hugging Face config.json", () => {
    const config = TinyModelConfig.parse({ ...sizes, eosTokenId: 3 });
    expect(fromHfConfig(JSON.parse(JSON.stringify(toHfConfig(config))), { file: "config.json" })).toEqual(config);
  });

  it("names the field that cannot work", () => {
    expect(TinyModelConfig.safeParse({ ...sizes, numHeads: 5 }).error?.issues[0]?.path).toEqual(["hiddenSize"]);
    expect(TinyModelConfig.safeParse({ ...sizes, numHeads: 64 }).error?.issues[0]?.message).toMatch(/head size .* must be even/);
    expect(TinyModelConfig.safeParse({ ...sizes, eosTokenId: 1024 }).error?.issues[0]?.path).toEqual(["eosTokenId"]);
    expect(() => fromHfConfig({ ...toHfConfig(TinyModelConfig.parse(sizes)), tie_word_embeddings: false }, { file: "m/config.json" })).toThrow(
      /m\/config.json: tie_word_embeddings: the tiny model ties its input and output embeddings/,
    );
  });

  it("counts parameters: V·D + L·(4D² + 3DF + 2D) + D", () => {
    expect(countParameters(TinyModelConfig.parse(sizes))).toBe(1024 * 192 + 4 * (4 * 192 * 192 + 3 * 192 * 512 + 2 * 192) + 192);
  });
});

describe("Rng", () => {
  it("is a pure function of its seed and resumes exactly from its state", () => {
    const a = Rng.fromSeed(42);
    const b = Rng.fromSeed(42);
    const first = Array.from({ length: 5 }, () => a.nextUint32());
    expect(Array.from({ length: 5 }, () => b.nextUint32())).toEqual(first);
    const resumed = Rng.fromState(a.state());
    expect(Array.from({ length: 5 }, () => resumed.next())).toEqual(Array.from({ length: 5 }, () => a.next()));
    expect(Rng.fromSeed(43).nextUint32()).not.toBe(first[0]);
  });

  it("draws uniform doubles in [0, 1) and standard normals", () => {
    const rng = Rng.fromSeed(1);
    const u = Array.from({ length: 20_000 }, () => rng.next());
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...u)).toBeLessThan(1);
    expect(u.reduce((s, x) => s + x, 0) / u.length).toBeCloseTo(0.5, 2);
    const z = Array.from({ length: 20_000 }, () => rng.normal());
    const mean = z.reduce((s, x) => s + x, 0) / z.length;
    expect(mean).toBeCloseTo(0, 1);
    expect(z.reduce((s, x) => s + (x - mean) ** 2, 0) / z.length).toBeCloseTo(1, 1);
  });

  it("refuses states it cannot hold", () => {
    expect(() => Rng.fromState([1, 2, 3])).toThrow(/four unsigned 32-bit integers/);
    expect(() => Rng.fromState([0, 0, 0, 0])).toThrow(/cannot be all zeros/);
  });
});
