import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "./rng.js";
import { argmax, candidateSet, sampleToken } from "./sampling.js";

const plain = { temperature: 1, topP: 1, topK: 0 };

describe("seededRandom", () => {
  it("repeats its sequence for a seed and stays in [0, 1)", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(seededRandom(43)()).not.toBe(xs[0]);
    // Roughly uniform: the mean of 1000 draws is near 1/2.
    expect(Math.abs(xs.reduce((s, x) => s + x, 0) / 1000 - 0.5)).toBeLessThan(0.05);
  });
});

describe("argmax", () => {
  it("takes the first of equal maxima", () => {
    expect(argmax([1, 5, 5, 2])).toBe(1);
  });
});

describe("candidateSet", () => {
  const logits = [Math.log(0.1), Math.log(0.5), Math.log(0.15), Math.log(0.25)];

  it("is everything, unsorted, when nothing truncates", () => {
    expect(candidateSet(logits, plain)).toBeUndefined();
  });

  it("keeps the k most likely", () => {
    expect(candidateSet(logits, { ...plain, topK: 2 })).toEqual([1, 3]);
  });

  it("keeps the smallest prefix reaching top-p, including the token that crosses it", () => {
    expect(candidateSet(logits, { ...plain, topP: 0.5 })).toEqual([1]);
    expect(candidateSet(logits, { ...plain, topP: 0.6 })).toEqual([1, 3]);
    expect(candidateSet(logits, { ...plain, topP: 0.9 })).toEqual([1, 3, 2]);
  });

  it("applies top-p to the tempered distribution", () => {
    // At temperature 0.5 the probabilities square before renormalising: 0.25/0.345 ≈ 0.72 for token 1.
    expect(candidateSet(logits, { temperature: 0.5, topP: 0.6, topK: 0 })).toEqual([1]);
  });
});

describe("sampleToken", () => {
  const logits = [Math.log(0.1), Math.log(0.5), Math.log(0.15), Math.log(0.25)];

  it("inverts the cumulative distribution in index order", () => {
    expect(sampleToken(logits, plain, () => 0.05)).toMatchObject({ token: 0 });
    expect(sampleToken(logits, plain, () => 0.59)).toMatchObject({ token: 1 });
    expect(sampleToken(logits, plain, () => 0.7)).toMatchObject({ token: 2 });
    expect(sampleToken(logits, plain, () => 0.99)).toMatchObject({ token: 3 });
  });

  it("reports the log-probability under the truncated, renormalised distribution", () => {
    const drawn = sampleToken(logits, { ...plain, topK: 2 }, () => 0.9);
    expect(drawn.token).toBe(3);
    expect(drawn.logprob).toBeCloseTo(Math.log(0.25 / 0.75), 10);
    const tempered = sampleToken([0, Math.log(3)], { temperature: 0.5, topP: 1, topK: 0 }, () => 0.99);
    expect(tempered.token).toBe(1);
    expect(tempered.logprob).toBeCloseTo(Math.log(9 / 10), 10);
  });

  it("is greedy at temperature 0, a point mass with logprob 0", () => {
    expect(sampleToken(logits, { ...plain, temperature: 0 }, () => 0.99)).toEqual({ token: 1, logprob: 0 });
  });

  it("matches the distribution empirically", () => {
    const random = seededRandom(7);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20_000; i++) counts[sampleToken(logits, plain, random).token]!++;
    const expected = [0.1, 0.5, 0.15, 0.25];
    counts.forEach((count, i) => expect(Math.abs(count / 20_000 - expected[i]!)).toBeLessThan(0.015));
  });

  it("always returns a candidate whose logprob is finite and at most 0", () => {
    fc.assert(
      fc.property(
        fc.array(fc.float({ min: -20, max: 20, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.record({
          temperature: fc.double({ min: 0.05, max: 2, noNaN: true }),
          topP: fc.double({ min: 0.01, max: 1, noNaN: true }),
          topK: fc.integer({ min: 0, max: 50 }),
        }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (values, params, u) => {
          const drawn = sampleToken(values, params, () => u);
          const allowed = candidateSet(values, params);
          expect(drawn.token).toBeGreaterThanOrEqual(0);
          expect(drawn.token).toBeLessThan(values.length);
          if (allowed) expect(allowed).toContain(drawn.token);
          expect(Number.isFinite(drawn.logprob)).toBe(true);
          expect(drawn.logprob).toBeLessThanOrEqual(1e-9);
        },
      ),
    );
  });
});
