import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rng, mixSeed } from "./random.js";

describe("Rng", () => {
  it("replays the same stream for the same seed", () => {
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 20 }, () => rng.uint32());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it("draws integers inside the inclusive range, hitting both ends", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: -5, max: 5 }), fc.integer({ min: 0, max: 4 }), (seed, lo, width) => {
        const rng = new Rng(seed);
        const seen = new Set<number>();
        for (let i = 0; i < 200; i++) {
          const x = rng.int(lo, lo + width);
          expect(Number.isInteger(x) && x >= lo && x <= lo + width).toBe(true);
          seen.add(x);
        }
        expect(seen.size).toBe(width + 1);
      }),
      { numRuns: 50 },
    );
  });

  it("samples distinct elements", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 10 }), (seed, count) => {
        const picked = new Rng(seed).sample(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], count);
        expect(picked).toHaveLength(count);
        expect(new Set(picked).size).toBe(count);
      }),
    );
  });

  it("refuses impossible draws with a clear error", () => {
    const rng = new Rng(1);
    expect(() => rng.int(3, 2)).toThrow("bad integer range [3, 2]");
    expect(() => rng.pick([])).toThrow("empty list");
    expect(() => rng.sample([1], 2)).toThrow("cannot sample 2 of 1 items");
  });
});

describe("mixSeed", () => {
  it("separates neighbouring inputs and keeps the high bits of large seeds", () => {
    const seeds = new Set<number>();
    for (let seed = 0; seed < 50; seed++) for (let index = 0; index < 50; index++) seeds.add(mixSeed(seed, index));
    expect(seeds.size).toBe(2500);
    expect(mixSeed(2 ** 32 + 5)).not.toBe(mixSeed(5));
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
  });

  it("rejects seeds that are not non-negative safe integers", () => {
    expect(() => mixSeed(-1)).toThrow("non-negative safe integers");
    expect(() => mixSeed(1.5)).toThrow("non-negative safe integers");
  });
});
