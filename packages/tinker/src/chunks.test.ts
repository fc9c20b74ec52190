import { describe, expect, it } from "vitest";
import { mergeMetrics } from "./chunks.js";

describe("mergeMetrics with metric names a server chose", () => {
  it("merges `__proto__` and `constructor` names as data", () => {
    const first = JSON.parse('{"__proto__:sum": 1, "constructor:max": 2, "loss:mean": 4}') as Record<string, number>;
    const second = JSON.parse('{"__proto__:sum": 5, "constructor:max": 1, "loss:mean": 1}') as Record<string, number>;
    const merged = mergeMetrics([
      { metrics: first, datums: 1 },
      { metrics: second, datums: 3 },
    ]);
    // 1 + 5; max(2, 1); (4·1 + 1·3) / 4.
    expect(Object.entries(merged)).toEqual([
      ["__proto__:sum", 6],
      ["constructor:max", 2],
      ["loss:mean", 1.75],
    ]);
    expect("toString" in merged).toBe(false);
  });

  it("keeps a bare `__proto__` name of a single chunk as a metric, with no prototype behind it", () => {
    const metrics = JSON.parse('{"__proto__": 3, "constructor": 4}') as Record<string, number>;
    const merged = mergeMetrics([{ metrics, datums: 2 }]);
    expect(Object.entries(merged)).toEqual([
      ["__proto__", 3],
      ["constructor", 4],
    ]);
    expect(JSON.stringify(merged)).toBe('{"__proto__":3,"constructor":4}');
    expect("toString" in merged).toBe(false);
  });
});
