import { crossEntropySum, defaultPolicyLossConfig, importanceSamplingSum, policyLoss, type PolicyLossConfig } from "@envace/grpo";
import type { Datum, LossFn } from "@envace/training";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TinkerLossError } from "./errors.js";
import { evaluateObjective, planLoss, rescaleAdvantages, surrogateData, type LossMappingOptions, type RemoteReduction } from "./loss-mapping.js";
import type { WireDatum } from "./wire.js";

/**
 * What a Tinker server computes, written from the protocol description alone: per-token losses
 * (`cross_entropy` −w·lp, `importance_sampling` −r·A, `ppo` −min(r·A, clip(r)·A)), reduced by a
 * plain sum (hosted) or per datum Σw·loss/Σw, summed over datums and divided by their number
 * (SkyRL tx JAX). Returns the loss and its gradient with respect to each learner log-probability.
 */
function remote(
  data: readonly WireDatum[],
  lossFn: string,
  config: Record<string, number> | null,
  learner: readonly (readonly number[])[],
  reduction: RemoteReduction,
): { loss: number; grad: number[][] } {
  const lo = config?.clip_low_threshold ?? 0.8;
  const hi = config?.clip_high_threshold ?? 1.2;
  let loss = 0;
  const grad = data.map((datum, i) => {
    const input = (name: string) => {
      const data = datum.loss_fn_inputs[name]?.data;
      return data && Array.from(data);
    };
    const lp = learner[i]!;
    const weights = input("weights") ?? lp.map(() => 1);
    const scale =
      reduction === "sum"
        ? 1
        : 1 /
          (data.length *
            Math.max(
              weights.reduce((s, w) => s + w, 0),
              1e-9,
            ));
    const w = (t: number) => (reduction === "sum" ? 1 : weights[t]!);
    return lp.map((x, t) => {
      let l: number;
      let g: number;
      if (lossFn === "cross_entropy") {
        l = -weights[t]! * x;
        g = -weights[t]!;
      } else {
        const a = input("advantages")![t]!;
        const r = Math.exp(x - input("logprobs")![t]!);
        const clipped = Math.min(hi, Math.max(lo, r));
        if (lossFn === "ppo" && clipped * a < r * a) {
          l = -clipped * a;
          g = 0;
        } else {
          l = -r * a;
          g = -r * a;
        }
      }
      loss += scale * w(t) * l;
      return scale * w(t) * g;
    });
  });
  return { loss, grad };
}

// Datums with a prompt part (mask 0) and an output part (mask 1), sampler log-probabilities, a
// shared advantage per datum, reference log-probabilities, and a learner that differs a little.
const arbData = fc.array(
  fc
    .record({ prompt: fc.integer({ min: 1, max: 4 }), output: fc.integer({ min: 1, max: 5 }), advantage: fc.double({ min: -2, max: 2, noNaN: true }) })
    .chain(({ prompt, output, advantage }) => {
      const n = prompt + output - 1;
      const lps = fc.array(fc.double({ min: -4, max: -0.05, noNaN: true }), { minLength: n, maxLength: n });
      return fc.record({ sampler: lps, ref: lps, learner: lps }).map(({ sampler, ref, learner }) => {
        const mask = Array.from({ length: n }, (_, t) => (t >= prompt - 1 ? 1 : 0));
        const datum: Datum = {
          tokens: Array.from({ length: n }, (_, t) => t % 7),
          targetTokens: Array.from({ length: n }, (_, t) => (t + 1) % 7),
          logprobs: sampler.map((x, t) => (mask[t] ? x : 0)),
          advantages: mask.map((m) => m * advantage),
          mask,
          refLogprobs: ref,
        };
        return { datum, learner };
      });
    }),
  { minLength: 1, maxLength: 4 },
);

const arbAggregation = fc.constantFrom("token-mean" as const, "seq-mean-token-mean" as const, "seq-sum" as const);
const arbReduction = fc.constantFrom("sum" as const, "datum-token-mean" as const);
const options = (reduction: RemoteReduction, overrides: Partial<LossMappingOptions> = {}): LossMappingOptions => ({
  reduction,
  strategy: "native",
  drop: [],
  serverLosses: [],
  ...overrides,
});
const grpo = (config: Partial<PolicyLossConfig>): LossFn => ({ type: "grpo", config: { ...defaultPolicyLossConfig, ...config } });

function expectClose(actual: readonly (readonly number[])[], expected: readonly (readonly number[])[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((row, i) => row.forEach((x, t) => expect(x).toBeCloseTo(expected[i]![t]!, 9)));
}

describe("rescaled advantages", () => {
  it("weigh each token by its aggregation weight under a sum", () => {
    // coef 1/4 and 1/2: advantages 2 and −1 become 0.5 and −0.5.
    expect(rescaleAdvantages([[2, -1]], [[0.25, 0.5]], [[1, 1]], "sum")).toEqual({ advantages: [[0.5, -0.5]], weights: null });
  });

  it("undo the per-datum token mean and the division by datums", () => {
    // Two datums; datum 0 has 2 loss tokens: A' = coef·A·D·M = 0.25·2·2·2 = 2, and its prompt position stays 0.
    const scaled = rescaleAdvantages([[0, 2, 2], [1]], [[0, 0.25, 0.25], [0.5]], [[0, 1, 1], [1]], "datum-token-mean");
    expect(scaled.advantages).toEqual([[0, 2, 2], [1]]);
    expect(scaled.weights).toEqual([[0, 1, 1], [1]]);
  });
});

describe("what the server computes equals our objective", () => {
  it("GRPO without dual clip or KL through ppo with rescaled advantages, every aggregation and reduction", () => {
    fc.assert(
      fc.property(arbData, arbAggregation, arbReduction, (items, aggregation, reduction) => {
        const data = items.map((x) => x.datum);
        const learner = items.map((x) => x.learner);
        const loss = grpo({ dualClip: null, aggregation });
        const plan = planLoss(data, loss, options(reduction));
        if (plan.kind !== "direct") throw new Error(`expected a direct plan, got ${plan.kind}`);
        expect(plan.lossFn).toBe("ppo");
        expect(plan.config).toEqual({ clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
        const server = remote(plan.data, plan.lossFn, plan.config, learner, reduction);
        const ours = policyLoss(
          data.map((d, i) => ({ logprobs: learner[i]!, samplerLogprobs: d.logprobs, advantages: d.advantages, mask: d.mask })),
          (loss as Extract<LossFn, { type: "grpo" }>).config,
        );
        expect(server.loss).toBeCloseTo(ours.loss, 9);
        expectClose(server.grad, ours.gradLogprobs);
      }),
    );
  });

  it("importance_sampling and cross_entropy keep Tinker's token sum under either reduction", () => {
    fc.assert(
      fc.property(arbData, arbReduction, (items, reduction) => {
        const data = items.map((x) => x.datum);
        const learner = items.map((x) => x.learner);
        const rows = data.map((d, i) => ({ logprobs: learner[i]!, samplerLogprobs: d.logprobs, advantages: d.advantages, mask: d.mask }));
        const is = planLoss(data, { type: "importance_sampling" }, options(reduction));
        if (is.kind !== "direct") throw new Error("expected a direct plan");
        const server = remote(is.data, is.lossFn, is.config, learner, reduction);
        expect(server.loss).toBeCloseTo(importanceSamplingSum(rows).loss, 9);
        expectClose(server.grad, importanceSamplingSum(rows).gradLogprobs);
        if (reduction === "sum") {
          const ce = planLoss(data, { type: "cross_entropy" }, options(reduction));
          if (ce.kind !== "direct") throw new Error("expected a direct plan");
          expect(remote(ce.data, ce.lossFn, ce.config, learner, reduction).loss).toBeCloseTo(crossEntropySum(rows).loss, 9);
        }
      }),
    );
  });

  it("the surrogate's gradient equals the full objective's (dual clip, KL), and cross_entropy's under the per-datum mean", () => {
    fc.assert(
      fc.property(arbData, arbAggregation, arbReduction, (items, aggregation, reduction) => {
        const data = items.map((x) => x.datum);
        const learner = items.map((x) => x.learner);
        for (const loss of [grpo({ dualClip: 1.5, klCoef: 0.3, aggregation }), { type: "cross_entropy" } as const]) {
          const plan = planLoss(data, loss, options(reduction, { strategy: "surrogate" }));
          if (loss.type === "cross_entropy" && reduction === "sum") {
            expect(plan.kind).toBe("direct");
            continue;
          }
          if (plan.kind !== "surrogate") throw new Error(`expected a surrogate plan, got ${plan.kind}`);
          const target = evaluateObjective(plan.objective, data, learner);
          const wire = surrogateData(data, learner, target.gradLogprobs, reduction);
          // At the weights the forward pass saw, every ratio is exactly 1.
          expectClose(remote(wire, "importance_sampling", null, learner, reduction).grad, target.gradLogprobs);
        }
      }),
    );
  });
});

describe("planning refuses what the server cannot express", () => {
  const data: Datum[] = [{ tokens: [1, 2], targetTokens: [2, 3], logprobs: [0, -1], advantages: [0, 1], mask: [0, 1] }];

  it("names the dual clip and the ways out", () => {
    expect(() => planLoss(data, grpo({}), options("sum"))).toThrow(TinkerLossError);
    expect(() => planLoss(data, grpo({}), options("sum"))).toThrow(
      'the server\'s losses cannot express the dual clip of the GRPO loss; use lossStrategy "surrogate" (one extra forward pass per step, exact gradient), dropUnsupportedTerms: ["dualClip"] to train without it, or a loss config without it',
    );
  });

  it("refuses the entropy bonus under every strategy unless it is dropped explicitly", () => {
    for (const strategy of ["native", "surrogate", "surrogate-always"] as const) {
      expect(() => planLoss(data, grpo({ dualClip: null, entropyCoef: 0.01 }), options("sum", { strategy }))).toThrow(
        /cannot express the entropy bonus .*never returns the full next-token distribution/,
      );
    }
    const plan = planLoss(data, grpo({ dualClip: null, entropyCoef: 0.01 }), options("sum", { drop: ["entropy"] }));
    expect(plan.kind === "direct" && plan.dropped).toEqual(["entropy"]);
    expect(plan.kind === "direct" && plan.objective.type === "grpo" && plan.objective.config.entropyCoef).toBe(0);
  });

  it("drops the dual clip only when asked, and reports it", () => {
    const plan = planLoss(data, grpo({ klCoef: 0.1 }), options("sum", { drop: ["dualClip", "kl"] }));
    expect(plan.kind).toBe("direct");
    expect(plan.kind !== "extension" && plan.dropped).toEqual(["dualClip", "kl"]);
  });

  it("refuses cross_entropy under the per-datum mean without the surrogate", () => {
    expect(() => planLoss(data, { type: "cross_entropy" }, options("datum-token-mean"))).toThrow(/averages each datum/);
  });

  it("sends GRPO unchanged to a server that implements it", () => {
    const plan = planLoss(data, grpo({ entropyCoef: 0.01 }), options("sum", { serverLosses: ["envace_grpo"] }));
    expect(plan.kind).toBe("extension");
    if (plan.kind !== "extension") return;
    expect(plan.config).toEqual({ eps_low: 0.2, eps_high: 0.2, dual_clip: 3, kl_coef: 0, entropy_coef: 0.01, aggregation: "seq-mean-token-mean" });
    expect(Object.keys(plan.data[0]!.loss_fn_inputs).sort()).toEqual(["advantages", "logprobs", "mask", "target_tokens"]);
  });

  it("routes every loss through the surrogate under surrogate-always", () => {
    expect(planLoss(data, { type: "ppo", clipLow: 0.8, clipHigh: 1.2 }, options("sum", { strategy: "surrogate-always" })).kind).toBe("surrogate");
  });
});

describe("cispo and dro", () => {
  const data: Datum[] = [{ tokens: [1, 2, 3], targetTokens: [2, 3, 4], logprobs: [0, -1, -2], advantages: [0, 0.5, 0.5], mask: [0, 1, 1] }];

  it("send cispo as Tinker's cispo with its ratio bounds", () => {
    const plan = planLoss(data, { type: "cispo", clipLow: 0, clipHigh: 4 }, options("sum"));
    expect(plan.kind === "direct" && [plan.lossFn, plan.config]).toEqual(["cispo", { clip_low_threshold: 0, clip_high_threshold: 4 }]);
  });

  it("refuse dro natively, since a Tinker server's dro penalises unmasked prompt positions, and take it through the surrogate", () => {
    expect(() => planLoss(data, { type: "dro", beta: 0.1 }, options("sum"))).toThrow(
      'a Tinker server\'s dro penalises every position it scores, prompt positions included (it takes no mask), so it cannot reproduce a masked dro; use lossStrategy "surrogate"',
    );
    expect(planLoss(data, { type: "dro", beta: 0.1 }, options("sum", { strategy: "surrogate" })).kind).toBe("surrogate");
  });
});
