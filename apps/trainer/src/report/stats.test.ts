import { describe, expect, it } from "vitest";
import { formatInterval, pairedDifference, pairedRatioDifference, pooledRate, wilsonInterval } from "./stats.js";

describe("wilsonInterval", () => {
  it("matches published Wilson intervals (Newcombe 1998, table I)", () => {
    const half = wilsonInterval(5, 10);
    expect(half.rate).toBe(0.5);
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
    const none = wilsonInterval(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    expect(wilsonInterval(10, 10)).toMatchObject({ rate: 1, high: 1 });
    expect(wilsonInterval(10, 10).low).toBeCloseTo(0.7225, 4);
  });

  it("narrows with more tasks at the same rate, by about 1/√n", () => {
    // By hand: 20/128 → [0.1035, 0.2290]; 80/512 → about half as wide.
    const small = wilsonInterval(20, 128);
    expect(small.low).toBeCloseTo(0.1035, 4);
    expect(small.high).toBeCloseTo(0.229, 3);
    const large = wilsonInterval(80, 512);
    expect((large.high - large.low) / (small.high - small.low)).toBeCloseTo(0.5, 1);
  });

  it("refuses counts that are not a rate", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 4)).toThrow(RangeError);
    expect(wilsonInterval(0, 0)).toEqual({ rate: 0, low: 0, high: 1 });
  });
});

describe("pairedDifference", () => {
  it("is exactly 0 with a zero-width interval when nothing changed, and 1 when everything flipped to success", () => {
    const same = [true, false, true, true, false];
    expect(pairedDifference(same, same)).toEqual({ rate: 0, low: 0, high: 0 });
    expect(pairedDifference([false, false, false], [true, true, true])).toEqual({ rate: 1, low: 1, high: 1 });
  });

  it("resamples tasks: the interval holds the observed difference and excludes 0 only when the gain is clear", () => {
    const n = 200;
    const before = Array.from({ length: n }, (_, i) => i % 4 === 0);
    // 20 of 200 tasks gained, none lost: +0.10, a clear gain.
    const after = before.map((b, i) => b || i % 10 === 1);
    const gain = pairedDifference(before, after, { seed: 1 });
    expect(gain.rate).toBeCloseTo(0.1, 10);
    expect(gain.low).toBeGreaterThan(0);
    expect(gain.low).toBeLessThan(0.1);
    expect(gain.high).toBeGreaterThan(0.1);
    // 10 gained and 9 lost: +0.005, inside the noise.
    const mixed = before.map((b, i) => (i % 20 === 1 ? true : i % 24 === 0 ? false : b));
    const noise = pairedDifference(before, mixed, { seed: 1 });
    expect(noise.rate).toBeCloseTo(0.005, 10);
    expect(noise.low).toBeLessThan(0);
    expect(noise.high).toBeGreaterThan(0);
    expect(pairedDifference(before, after, { seed: 1 })).toEqual(gain);
  });

  it("refuses outcomes of different tasks", () => {
    expect(() => pairedDifference([true], [true, false])).toThrow(RangeError);
  });
});

it("formats a rate with its interval", () => {
  expect(formatInterval({ rate: 0.2344, low: 0.17, high: 0.3125 })).toBe("0.234 [0.170, 0.313]");
});

describe("pooledRate and pairedRatioDifference", () => {
  it("pool sums over tasks, not the mean of per-task rates", () => {
    // By hand: (1 + 0 + 3) / (1 + 2 + 3) = 4/6; the mean of the task rates would be (1 + 0 + 1) / 3.
    const tasks = [
      { hits: 1, of: 1 },
      { hits: 0, of: 2 },
      { hits: 3, of: 3 },
    ];
    expect(pooledRate(tasks, { seed: 1 })!.rate).toBeCloseTo(4 / 6, 12);
    const all = pooledRate([
      { hits: 2, of: 2 },
      { hits: 5, of: 5 },
    ])!;
    expect(all).toEqual({ rate: 1, low: 1, high: 1 });
  });

  it("is null with no denominator, and leaves out resamples that drew none", () => {
    expect(pooledRate([])).toBeNull();
    expect(pooledRate([{ hits: 0, of: 0 }])).toBeNull();
    expect(pairedRatioDifference([{ hits: 0, of: 0 }], [{ hits: 1, of: 1 }])).toBeNull();
    // One task of ten has failures to recall: every resample that misses it is left out, so the
    // interval is that task's own rate, 1/2, at both ends.
    const sparse = [{ hits: 1, of: 2 }, ...Array.from({ length: 9 }, () => ({ hits: 0, of: 0 }))];
    expect(pooledRate(sparse, { seed: 3 })).toEqual({ rate: 0.5, low: 0.5, high: 0.5 });
  });

  it("differences pool each arm over the same resampled tasks", () => {
    // By hand: before 2/8 = 0.25, after 6/8 = 0.75 on the same four tasks; every task gained, so
    // every resample's difference is positive.
    const before = [
      { hits: 0, of: 2 },
      { hits: 1, of: 2 },
      { hits: 0, of: 2 },
      { hits: 1, of: 2 },
    ];
    const after = [
      { hits: 1, of: 2 },
      { hits: 2, of: 2 },
      { hits: 1, of: 2 },
      { hits: 2, of: 2 },
    ];
    const diff = pairedRatioDifference(before, after, { seed: 2 })!;
    expect(diff.rate).toBeCloseTo(0.5, 12);
    // Each task gains 1 of 2 calls: every resample's difference is exactly 0.5.
    expect(diff.low).toBeCloseTo(0.5, 12);
    expect(diff.high).toBeCloseTo(0.5, 12);
    expect(pairedRatioDifference(after, after)).toEqual({ rate: 0, low: 0, high: 0 });
    expect(() => pairedRatioDifference(before, after.slice(1))).toThrow(RangeError);
  });

  it("weights tasks by their calls: a task with more calls moves the pooled difference more", () => {
    // By hand: before (0 + 0) / (1 + 9) = 0; after (1 + 0) / (1 + 9) = 0.1, though the per-task
    // rates moved by 1 and 0 (a mean of 0.5).
    const diff = pairedRatioDifference(
      [
        { hits: 0, of: 1 },
        { hits: 0, of: 9 },
      ],
      [
        { hits: 1, of: 1 },
        { hits: 0, of: 9 },
      ],
      { seed: 4 },
    )!;
    expect(diff.rate).toBeCloseTo(0.1, 12);
    expect(diff.low).toBeGreaterThanOrEqual(0);
    expect(diff.high).toBeLessThanOrEqual(1);
  });
});
