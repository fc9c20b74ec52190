import { describe, expect, it } from "vitest";
import { aggregate, nameCounts, scoreSample } from "./metrics.js";
import { rescoreFile } from "./run.js";
import { loadSamples } from "./sample.js";
import { fixture } from "./testing/spawn.js";

describe("per-sample tool-name metrics", () => {
  it("counts names as multisets: a repeated name matches once per gold occurrence", () => {
    expect(nameCounts(["a", "b", "b"], ["b", "b", "b", "c"])).toEqual({ tp: 2, fp: 2, fn: 1 });
    expect(nameCounts([], [])).toEqual({ tp: 0, fp: 0, fn: 0 });
  });

  it("gives 0 on empty denominators and exact match only for the same ordered list", () => {
    expect(scoreSample(["a"], [])).toEqual({ tp: 0, fp: 0, fn: 1, precision: 0, recall: 0, f1: 0, exactMatch: false });
    expect(scoreSample([], ["a"])).toEqual({ tp: 0, fp: 1, fn: 0, precision: 0, recall: 0, f1: 0, exactMatch: false });
    // Nothing to call and nothing called: P, R and F1 are 0 by the rule, the lists match.
    expect(scoreSample([], [])).toEqual({ tp: 0, fp: 0, fn: 0, precision: 0, recall: 0, f1: 0, exactMatch: true });
    expect(scoreSample(["a", "b"], ["b", "a"])).toMatchObject({ f1: 1, exactMatch: false });
    // TP 1, FP 2, FN 1: P 1/3, R 1/2, F1 = 2·(1/6)/(5/6) = 2/5.
    const s = scoreSample(["nav", "fx"], ["nav", "nav", "quote"]);
    expect([s.precision, s.recall]).toEqual([1 / 3, 1 / 2]);
    expect(s.f1).toBeCloseTo(0.4, 15);
  });

  it("aggregates nothing to zeros", () => {
    expect(aggregate([])).toEqual({
      samples: 0,
      macro: { precision: 0, recall: 0, f1: 0 },
      micro: { tp: 0, fp: 0, fn: 0, precision: 0, recall: 0, f1: 0 },
      exactMatch: 0,
    });
  });
});

describe("scoring the fixture predictions (values computed by hand)", () => {
  // s1 [quote] vs [quote]: TP1 FP0 FN0, P R F1 = 1, exact.
  // s2 [statement, quote] vs [quote, statement]: TP2, P R F1 = 1, not exact (order).
  // s3 [fx] vs []: TP0 FP0 FN1, P 0 (empty denominator), R 0, F1 0.
  // s4 [nav, fx] vs [nav, nav, quote]: TP1 FP2 FN1, P 1/3, R 1/2, F1 2/5.
  // s5 [news, quote, quote] vs [news, quote]: TP2 FP0 FN1, P 1, R 2/3, F1 4/5.
  // s6 is marked error: dropped.
  it("overall: macro, micro and exact match over the five scored samples", async () => {
    const { summary, missing } = await rescoreFile(await loadSamples(fixture("samples.jsonl")), fixture("predictions.jsonl"));
    expect(missing).toEqual([]);
    expect(summary.samples).toBe(5);
    expect(summary.dropped).toBe(1);
    expect(summary.macro.precision).toBeCloseTo((1 + 1 + 0 + 1 / 3 + 1) / 5, 12); // 2/3
    expect(summary.macro.recall).toBeCloseTo((1 + 1 + 0 + 1 / 2 + 2 / 3) / 5, 12); // 19/30
    expect(summary.macro.f1).toBeCloseTo((1 + 1 + 0 + 0.4 + 0.8) / 5, 12); // 0.64
    // Σ TP 6, Σ FP 2, Σ FN 3: P 6/8, R 6/9, F1 = 2·(3/4)(2/3)/(3/4 + 2/3) = 12/17.
    expect(summary.micro).toMatchObject({ tp: 6, fp: 2, fn: 3, precision: 0.75 });
    expect(summary.micro.recall).toBeCloseTo(2 / 3, 12);
    expect(summary.micro.f1).toBeCloseTo(12 / 17, 12);
    expect(summary.exactMatch).toBeCloseTo(1 / 5, 12);
  });

  it("breaks down by task type, difficulty and scenery level 1", async () => {
    const { summary } = await rescoreFile(await loadSamples(fixture("samples.jsonl")), fixture("predictions.jsonl"));
    const f1 = (groups: Record<string, { macro: { f1: number } }>): Record<string, number> =>
      Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, Number(v.macro.f1.toFixed(12))]));
    // single step: s1 (1), s3 (0); multi step: s2 (1), s5 (0.8); multi turn: s4 (0.4).
    expect(f1(summary.byTask)).toEqual({ "multi step": 0.9, "multi turn": 0.4, "single step": 0.5 });
    // easy: s1, s3; medium: s2 (s6 dropped); hard: s4, s5.
    expect(f1(summary.byDifficulty)).toEqual({ easy: 0.5, hard: 0.6, medium: 1 });
    // Stock: s1, s2, s5; FX: s3; Fund: s4.
    expect(f1(summary.bySceneryLevel1)).toEqual({ FX: 0, Fund: 0.4, Stock: Number((2.8 / 3).toFixed(12)) });
    // multi step micro: TP 4, FP 0, FN 1: P 1, R 4/5, F1 8/9.
    expect(summary.byTask["multi step"]!.micro.f1).toBeCloseTo(8 / 9, 12);
    expect(summary.byTask["single step"]!.exactMatch).toBe(0.5);
    expect(summary.byTask["single step"]!.samples).toBe(2);
  });
});
