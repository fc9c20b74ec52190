import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyLossConfig, defaultPolicyLossConfig } from "./loss-config.js";
import { aggregationWeights, k3TokenKl, lengthMismatch, lossMetrics, policyLoss, type LossRow } from "./loss.js";
import { crossEntropySum, importanceSamplingSum, ppoSum } from "./sum-losses.js";

const config = (overrides: Partial<PolicyLossConfig> = {}): PolicyLossConfig => ({
  ...defaultPolicyLossConfig,
  aggregation: "token-mean",
  ...overrides,
});

/** A row whose learner/sampler ratio at each position is `ratios[t]` (sampler log-prob −1). */
function rowWithRatios(ratios: number[], advantages: number[], mask = ratios.map(() => 1)): LossRow {
  return {
    logprobs: ratios.map((r) => -1 + Math.log(r)),
    samplerLogprobs: ratios.map(() => -1),
    advantages,
    mask,
  };
}

describe("the clipped surrogate", () => {
  it("matches hand-computed token losses, gradients and clip statistics", () => {
    // ε = 0.2 on both sides, dual clip c = 3, token-mean over 5 tokens (weight 1/5 each).
    //  t  ratio  A   −A·r   −A·clip(r)  max     dual cap −A·c   loss  ∂loss/∂lp (before 1/5)
    //  0  1.1    +1  −1.1   −1.1        −1.1    —              −1.1  −A·r = −1.1
    //  1  1.5    +1  −1.5   −1.2        −1.2    —              −1.2  0 (clipped)
    //  2  0.5    −1   0.5    0.8         0.8    3               0.8  0 (clipped)
    //  3  4      −1   4      1.2         4      3               3    0 (dual clip)
    //  4  2      −1   2      1.2         2      3               2    −A·r = 2
    const result = policyLoss([rowWithRatios([1.1, 1.5, 0.5, 4, 2], [1, 1, -1, -1, -1])], config());
    expect(result.loss).toBeCloseTo((-1.1 - 1.2 + 0.8 + 3 + 2) / 5, 12);
    expect(result.terms.policy).toBeCloseTo(0.7, 12);
    const grad = result.gradLogprobs[0]!;
    expect(grad[0]).toBeCloseTo(-1.1 / 5, 12);
    expect(grad.slice(1, 4)).toEqual([0, 0, 0]);
    expect(grad[4]).toBeCloseTo(2 / 5, 12);
    expect(result.diagnostics.clipFraction).toBeCloseTo(2 / 5, 12);
    expect(result.diagnostics.dualClipFraction).toBeCloseTo(1 / 5, 12);
    expect(result.diagnostics.ratioMax).toBeCloseTo(4, 12);
    expect(result.diagnostics.ratioMin).toBeCloseTo(0.5, 12);
    expect(result.diagnostics.ratioMean).toBeCloseTo((1.1 + 1.5 + 0.5 + 4 + 2) / 5, 12);
    // k1 KL(sampler ‖ learner) = mean(−log r).
    expect(result.diagnostics.samplerKl).toBeCloseTo(-(Math.log(1.1) + Math.log(1.5) + Math.log(0.5) + Math.log(4) + Math.log(2)) / 5, 12);
  });

  it("without the dual clip lets a negative-advantage token's loss grow with its ratio", () => {
    const result = policyLoss([rowWithRatios([4], [-1])], config({ dualClip: null }));
    expect(result.loss).toBeCloseTo(4, 12);
    expect(result.gradLogprobs[0]![0]).toBeCloseTo(4, 12);
  });

  it("clips asymmetrically with ε_low ≠ ε_high", () => {
    // ε_low 0.1, ε_high 0.3: ratio 1.25 with A = 1 is inside [0.9, 1.3], ratio 0.85 with A = −1 is clipped to 0.9.
    const result = policyLoss([rowWithRatios([1.25, 0.85], [1, -1])], config({ epsLow: 0.1, epsHigh: 0.3 }));
    expect(result.loss).toBeCloseTo((-1.25 + 0.9) / 2, 12);
    expect(result.diagnostics.clipFraction).toBeCloseTo(0.5, 12);
  });

  it("ignores masked positions entirely, even garbage ones", () => {
    const row = rowWithRatios([1.1, 1], [1, 0], [1, 0]);
    const garbage = { ...row, logprobs: [row.logprobs[0]!, NaN], samplerLogprobs: [-1, Infinity] };
    const result = policyLoss([garbage], config());
    expect(result.loss).toBeCloseTo(-1.1, 12);
    expect(result.gradLogprobs[0]![0]).toBeCloseTo(-1.1, 12);
    expect(result.gradLogprobs[0]![1]).toBe(0);
    expect(result.diagnostics.tokens).toBe(1);
  });
});

describe("aggregation", () => {
  // Row a has 3 loss tokens, row b has 1 (its first position is prompt).
  const masks = [
    [1, 1, 1],
    [0, 1],
  ];

  it("token-mean weighs every loss token of the batch equally", () => {
    expect(aggregationWeights(masks, "token-mean")).toEqual([
      [0.25, 0.25, 0.25],
      [0, 0.25],
    ]);
  });

  it("seq-mean-token-mean weighs every row equally (the reference's effective reduction)", () => {
    // Row a: 1 / (3 tokens · 2 rows) = 1/6 per token; row b: 1 / (1 · 2) = 1/2.
    const w = aggregationWeights(masks, "seq-mean-token-mean");
    for (const x of w[0]!) expect(x).toBeCloseTo(1 / 6, 12);
    expect(w[1]).toEqual([0, 0.5]);
  });

  it("seq-sum sums within a row and averages over rows", () => {
    expect(aggregationWeights(masks, "seq-sum")).toEqual([
      [0.5, 0.5, 0.5],
      [0, 0.5],
    ]);
  });

  it("does not count rows without loss tokens", () => {
    expect(
      aggregationWeights(
        [
          [1, 1],
          [0, 0],
        ],
        "seq-mean-token-mean",
      ),
    ).toEqual([
      [0.5, 0.5],
      [0, 0],
    ]);
    expect(aggregationWeights([[0]], "token-mean")).toEqual([[0]]);
  });

  it("changes the loss as the weights say", () => {
    // Unclipped tokens with A = 1 and ratio 1 each lose −1: row a sums to −3, row b to −1.
    const rows = [rowWithRatios([1, 1, 1], [1, 1, 1]), rowWithRatios([1, 1], [0, 1], [0, 1])];
    expect(policyLoss(rows, config({ aggregation: "token-mean" })).loss).toBeCloseTo(-4 / 4, 12);
    expect(policyLoss(rows, config({ aggregation: "seq-mean-token-mean" })).loss).toBeCloseTo((-3 / 3 + -1 / 1) / 2, 12);
    expect(policyLoss(rows, config({ aggregation: "seq-sum" })).loss).toBeCloseTo((-3 + -1) / 2, 12);
  });
});

describe("KL and entropy terms", () => {
  it("adds klCoef · k3 and subtracts entropyCoef · entropy", () => {
    // lp = −1, ref = −0.5: d = ref − lp = 0.5, k3 = e^0.5 − 0.5 − 1, ∂k3/∂lp = 1 − e^0.5.
    const k3 = Math.exp(0.5) - 1.5;
    expect(k3TokenKl(-1, -0.5).kl).toBeCloseTo(k3, 12);
    expect(k3TokenKl(-1, -0.5).grad).toBeCloseTo(1 - Math.exp(0.5), 12);
    const row: LossRow = { logprobs: [-1], samplerLogprobs: [-1], advantages: [0.5], mask: [1], refLogprobs: [-0.5], entropy: [2] };
    const result = policyLoss([row], config({ klCoef: 0.1, entropyCoef: 0.01 }));
    // Policy term: −0.5 · 1. Loss = −0.5 + 0.1·k3 − 0.01·2.
    expect(result.terms.policy).toBe(-0.5);
    expect(result.terms.kl).toBeCloseTo(k3, 12);
    expect(result.terms.entropy).toBe(2);
    expect(result.loss).toBeCloseTo(-0.5 + 0.1 * k3 - 0.02, 12);
    expect(result.gradLogprobs[0]![0]).toBeCloseTo(-0.5 + 0.1 * (1 - Math.exp(0.5)), 12);
    expect(result.gradEntropy[0]![0]).toBeCloseTo(-0.01, 12);
    expect(result.diagnostics.refKl).toBeCloseTo(k3, 12);
    expect(result.diagnostics.entropy).toBe(2);
    const metrics = lossMetrics(result);
    expect(metrics["ref_kl:mean"]).toBeCloseTo(k3, 12);
    expect(metrics).toMatchObject({ "entropy:mean": 2, "tokens:sum": 1, "loss:mean": result.loss });
  });

  it("refuses to compute a term whose inputs are missing", () => {
    const row = rowWithRatios([1], [1]);
    expect(() => policyLoss([row], config({ klCoef: 0.1 }))).toThrow(/loss row 0: klCoef > 0 needs refLogprobs/);
    expect(() => policyLoss([row], config({ entropyCoef: 0.1 }))).toThrow(/entropyCoef > 0 needs entropy/);
    expect(() => policyLoss([{ ...row, advantages: [1, 2] }], config())).toThrow(/advantages has 2 entries, mask has 1/);
  });

  it("names the first per-token array of the wrong length, skipping absent ones", () => {
    expect(lengthMismatch(2, { a: [1, 2], b: undefined, c: [1], d: [] })).toEqual({ name: "c", length: 1 });
    expect(lengthMismatch(1, { a: [1], b: undefined })).toBeUndefined();
  });

  it("validates the config", () => {
    expect(PolicyLossConfig.safeParse({ ...defaultPolicyLossConfig, dualClip: 1 }).success).toBe(false);
    expect(PolicyLossConfig.safeParse({ ...defaultPolicyLossConfig, epsLow: 1 }).success).toBe(false);
    expect(PolicyLossConfig.safeParse({ ...defaultPolicyLossConfig, klCoef: -1 }).success).toBe(false);
    expect(PolicyLossConfig.parse(defaultPolicyLossConfig)).toEqual(defaultPolicyLossConfig);
  });
});

describe("Tinker's sum losses", () => {
  it("cross_entropy is −Σ weight · logprob", () => {
    const result = crossEntropySum([{ logprobs: [-1, -2, -0.5], mask: [0, 1, 1] }]);
    expect(result.loss).toBeCloseTo(2.5, 12);
    expect(result.gradLogprobs).toEqual([[-0, -1, -1]]);
  });

  it("importance_sampling is −Σ ratio · A", () => {
    // Ratios 2 and 0.5 with A = 1 and −2: −(2·1) − (0.5·−2) = −1.
    const result = importanceSamplingSum([rowWithRatios([2, 0.5], [1, -2])]);
    expect(result.loss).toBeCloseTo(-1, 12);
    expect(result.gradLogprobs[0]![0]).toBeCloseTo(-2, 12);
    expect(result.gradLogprobs[0]![1]).toBeCloseTo(1, 12);
  });

  it("ppo takes ratio bounds and sums", () => {
    // Bounds 0.8 / 1.2: ratio 1.5 with A = 1 loses −1.2, ratio 0.9 with A = −1 loses 0.9.
    const result = ppoSum([rowWithRatios([1.5, 0.9], [1, -1])], 0.8, 1.2);
    expect(result.loss).toBeCloseTo(-1.2 + 0.9, 12);
  });
});

// Rows of random length with learner/sampler log-probs, advantages, a mask, reference log-probs
// and entropies.
const arbRow = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.record({
    logprobs: fc.array(fc.double({ min: -5, max: -0.01, noNaN: true }), { minLength: n, maxLength: n }),
    samplerLogprobs: fc.array(fc.double({ min: -5, max: -0.01, noNaN: true }), { minLength: n, maxLength: n }),
    advantages: fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n }),
    mask: fc.array(fc.constantFrom(0, 1), { minLength: n, maxLength: n }),
    refLogprobs: fc.array(fc.double({ min: -5, max: -0.01, noNaN: true }), { minLength: n, maxLength: n }),
    entropy: fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: n, maxLength: n }),
  }),
);
const arbConfig = fc.record({
  epsLow: fc.double({ min: 0.05, max: 0.5, noNaN: true }),
  epsHigh: fc.double({ min: 0.05, max: 0.5, noNaN: true }),
  dualClip: fc.option(fc.double({ min: 1.5, max: 5, noNaN: true })),
  klCoef: fc.double({ min: 0, max: 0.5, noNaN: true }),
  entropyCoef: fc.double({ min: 0, max: 0.1, noNaN: true }),
  aggregation: fc.constantFrom("token-mean" as const, "seq-mean-token-mean" as const, "seq-sum" as const),
});

/** Far enough from every kink (clip bounds, dual-clip cap) for a central difference to be exact. */
function smooth(row: LossRow, t: number, c: PolicyLossConfig): boolean {
  const ratio = Math.exp(row.logprobs[t]! - row.samplerLogprobs[t]!);
  const far = (x: number) => Math.abs(ratio - x) > 1e-3;
  return far(1 - c.epsLow) && far(1 + c.epsHigh) && (c.dualClip === null || far(c.dualClip));
}

describe("properties", () => {
  it("the analytic gradient matches a central finite difference", () => {
    fc.assert(
      fc.property(fc.array(arbRow, { minLength: 1, maxLength: 3 }), arbConfig, (rows, c) => {
        const result = policyLoss(rows, c);
        const h = 1e-6;
        rows.forEach((row, i) => {
          row.logprobs.forEach((lp, t) => {
            if (!smooth(row, t, c)) return;
            const shifted = (delta: number) =>
              policyLoss(
                rows.map((r, j) => (j === i ? { ...r, logprobs: r.logprobs.map((x, s) => (s === t ? lp + delta : x)) } : r)),
                c,
              ).loss;
            const numeric = (shifted(h) - shifted(-h)) / (2 * h);
            expect(result.gradLogprobs[i]![t]).toBeCloseTo(numeric, 5);
          });
        });
      }),
    );
  });

  it("inside the clip range the gradient descends towards the advantage's sign", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.81, max: 1.19, noNaN: true }),
        fc.double({ min: -2, max: 2, noNaN: true }).filter((a) => Math.abs(a) > 1e-9),
        (ratio, advantage) => {
          const result = policyLoss([rowWithRatios([ratio], [advantage])], config());
          // Gradient descent moves logprob by −grad: up for a positive advantage, down for a negative one.
          expect(Math.sign(-result.gradLogprobs[0]![0]!)).toBe(Math.sign(advantage));
        },
      ),
    );
  });

  it("the aggregation weights of the live rows sum to one (means) or to the row count over rows (seq-sum)", () => {
    fc.assert(
      fc.property(fc.array(arbRow, { minLength: 1, maxLength: 4 }), (rows) => {
        const masks = rows.map((r) => r.mask);
        const live = masks.filter((m) => m.some((x) => x > 0)).length;
        const total = (mode: "token-mean" | "seq-mean-token-mean") =>
          aggregationWeights(masks, mode)
            .flat()
            .reduce((s, w) => s + w, 0);
        expect(total("token-mean")).toBeCloseTo(live > 0 ? 1 : 0, 12);
        expect(total("seq-mean-token-mean")).toBeCloseTo(live > 0 ? 1 : 0, 12);
      }),
    );
  });

  it("ppo with ratio bounds equals the GRPO loss without dual clip under seq-sum, times the row count", () => {
    fc.assert(
      fc.property(fc.array(arbRow, { minLength: 1, maxLength: 4 }), (rows) => {
        const live = rows.filter((r) => r.mask.some((m) => m > 0)).length;
        const grpo = policyLoss(rows, config({ dualClip: null, aggregation: "seq-sum" }));
        expect(ppoSum(rows, 0.8, 1.2).loss).toBeCloseTo(grpo.loss * live, 9);
      }),
    );
  });
});
