import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { item } from "../testing/fixtures.js";
import { aggregateTurnItems, combineGates, type DependenceMode, episodeScore } from "./aggregate.js";

// A search (required), its result, and a reply that relies on the result.
const search = item("search", { weight: 0.5, required_for_next_turn: true, focus_on: "assistant.tool_calls" });
const result = item("result", { weight: 0.25, focus_on: "tool.content" });
const reply = item("reply", { weight: 0.25, dependence: ["result"] });
const items = [search, result, reply];

describe("aggregateTurnItems", () => {
  it("passes an item for the turn if it passes at any step, and sums the weights", () => {
    const outcome = aggregateTurnItems(items, [
      [true, false, false],
      [false, false, true],
    ]);
    expect(outcome).toEqual({ countedAt: [0, null, 1], score: 0.75, gatePassed: true });
  });

  it("ignores dependence by default, as the reference does", () => {
    const grid = [[true, false, true]];
    expect(aggregateTurnItems(items, grid).score).toBe(1 - 0.25);
    expect(aggregateTurnItems(items, grid, "ignore").countedAt).toEqual([0, null, 0]);
  });

  it("counts an item only if its dependencies count, under `turn`", () => {
    const outcome = aggregateTurnItems(items, [[true, false, true]], "turn");
    expect(outcome).toEqual({ countedAt: [0, null, null], score: 0.5, gatePassed: true });
  });

  it("lets a dependency pass at a later step under `turn`, but not under `ordered`", () => {
    const grid = [
      [true, false, true],
      [false, true, false],
    ];
    expect(aggregateTurnItems(items, grid, "turn")).toEqual({ countedAt: [0, 1, 0], score: 1, gatePassed: true });
    expect(aggregateTurnItems(items, grid, "ordered")).toEqual({ countedAt: [0, 1, null], score: 0.75, gatePassed: true });
  });

  it("under `ordered`, counts the first pass at or after the dependency's step", () => {
    const grid = [
      [false, false, true],
      [false, true, false],
      [true, false, true],
    ];
    expect(aggregateTurnItems(items, grid, "ordered").countedAt).toEqual([2, 1, 2]);
  });

  it("follows chains of dependencies", () => {
    const chain = [item("a", { weight: 0.25 }), item("b", { weight: 0.25, dependence: ["a"] }), item("c", { weight: 0.5, dependence: ["b"] })];
    expect(aggregateTurnItems(chain, [[false, true, true]], "turn").score).toBe(0);
    expect(aggregateTurnItems(chain, [[true, false, true]], "turn").score).toBe(0.25);
    expect(aggregateTurnItems(chain, [[true, true, true]], "turn").score).toBe(1);
  });

  it("never counts items caught in a dependency cycle", () => {
    const cycle = [item("x", { weight: 0.5, dependence: ["y"] }), item("y", { weight: 0.5, dependence: ["x"] })];
    expect(aggregateTurnItems(cycle, [[true, true]], "ignore").score).toBe(1);
    expect(aggregateTurnItems(cycle, [[true, true]], "turn").score).toBe(0);
    expect(aggregateTurnItems(cycle, [[true, true]], "ordered").score).toBe(0);
  });

  it("fails the gate when a required item does not count", () => {
    expect(aggregateTurnItems(items, [[false, true, true]]).gatePassed).toBe(false);
    const requiredReply = [search, result, { ...reply, required_for_next_turn: true }];
    const grid = [[true, false, true]];
    expect(aggregateTurnItems(requiredReply, grid, "ignore").gatePassed).toBe(true);
    expect(aggregateTurnItems(requiredReply, grid, "turn").gatePassed).toBe(false);
  });

  it("scores a turn without steps or without items as 0 and lets an empty turn through", () => {
    expect(aggregateTurnItems(items, [])).toEqual({ countedAt: [null, null, null], score: 0, gatePassed: false });
    expect(aggregateTurnItems([], [[], []])).toEqual({ countedAt: [], score: 0, gatePassed: true });
  });

  it("rejects a result row of the wrong length and a dependency on an unknown item", () => {
    expect(() => aggregateTurnItems(items, [[true, false]])).toThrow("step 0 has 2 results for 3 checklist items");
    expect(() => aggregateTurnItems([item("a", { dependence: ["ghost"] })], [[true]], "turn")).toThrow('depends on unknown item "ghost"');
  });
});

describe("combineGates", () => {
  it("replays unless more than half of the checklists failed, under `majority`", () => {
    expect(combineGates([true])).toBe(true);
    expect(combineGates([false])).toBe(false);
    expect(combineGates([true, false])).toBe(true);
    expect(combineGates([false, false, true])).toBe(false);
    expect(combineGates([false, true, true])).toBe(true);
  });

  it("needs every checklist under `every`", () => {
    expect(combineGates([true, true], "every")).toBe(true);
    expect(combineGates([true, false], "every")).toBe(false);
  });
});

describe("episodeScore", () => {
  it("divides the sum of turn scores by checklists × reference turns", () => {
    expect(episodeScore([0.75, 1], 1, 2)).toBe(0.875);
    expect(episodeScore([1.25, 1.5], 2, 2)).toBe(0.6875);
  });

  it("counts turns that were never reached as 0", () => {
    expect(episodeScore([0.5], 1, 2)).toBe(0.25);
    expect(episodeScore([], 1, 3)).toBe(0);
  });

  it("rejects an episode without checklists or turns", () => {
    expect(() => episodeScore([1], 0, 1)).toThrow(RangeError);
    expect(() => episodeScore([1], 1, 0)).toThrow(RangeError);
  });
});

describe("aggregation properties", () => {
  // Items whose dependencies point only at earlier items (acyclic), with dyadic weights, and a grid of results.
  const turnCase = fc.integer({ min: 1, max: 6 }).chain((n) =>
    fc.record({
      items: fc.tuple(
        ...Array.from({ length: n }, (_, i) =>
          fc.record({
            weight: fc.integer({ min: 0, max: 8 }).map((k) => k / 8),
            required: fc.boolean(),
            deps: fc.subarray(Array.from({ length: i }, (_, j) => `i${j}`)),
          }),
        ),
      ),
      grid: fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), { maxLength: 5 }),
    }),
  );
  const build = (spec: { weight: number; required: boolean; deps: string[] }[]) =>
    spec.map((s, i) => item(`i${i}`, { weight: s.weight, required_for_next_turn: s.required, dependence: s.deps }));

  it("scores Σ weight of the items that pass at any step when dependence is ignored", () => {
    fc.assert(
      fc.property(turnCase, ({ items: spec, grid }) => {
        const expected = spec.reduce((sum, s, i) => sum + (grid.some((row) => row[i]) ? s.weight : 0), 0);
        expect(aggregateTurnItems(build(spec), grid).score).toBe(expected);
      }),
    );
  });

  it("never scores higher when dependence is honoured, and `ordered` is the strictest", () => {
    fc.assert(
      fc.property(turnCase, ({ items: spec, grid }) => {
        const score = (mode: DependenceMode) => aggregateTurnItems(build(spec), grid, mode).score;
        expect(score("turn")).toBeLessThanOrEqual(score("ignore"));
        expect(score("ordered")).toBeLessThanOrEqual(score("turn"));
      }),
    );
  });

  it("agrees across modes when no item has dependencies", () => {
    fc.assert(
      fc.property(turnCase, ({ items: spec, grid }) => {
        const flat = build(spec.map((s) => ({ ...s, deps: [] })));
        const ignore = aggregateTurnItems(flat, grid, "ignore");
        expect(aggregateTurnItems(flat, grid, "turn")).toEqual(ignore);
        expect(aggregateTurnItems(flat, grid, "ordered")).toEqual(ignore);
      }),
    );
  });
});
