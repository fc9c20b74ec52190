import { describe, expect, it } from "vitest";
import { categoryScore, percent, summarize, summaryTable } from "./summary.js";

const score = (category: string, correct: number, total: number) =>
  categoryScore(
    category,
    Array.from({ length: total }, (_, i) => ({ valid: i < correct })),
  );

describe("BFCL v4 summary", () => {
  it("averages as the leaderboard does and weights groups 10/10/10/30/40", () => {
    const summary = summarize([
      score("simple_python", 4, 4),
      score("simple_java", 1, 2),
      score("simple_javascript", 0, 2),
      score("multiple", 3, 4),
      score("parallel", 1, 4),
      score("parallel_multiple", 2, 4),
      score("irrelevance", 1, 1),
      score("live_irrelevance", 1, 2),
      score("live_simple", 1, 1),
      score("live_multiple", 0, 3),
      score("live_parallel", 0, 0),
      score("live_parallel_multiple", 0, 0),
      score("multi_turn_base", 1, 2),
      score("multi_turn_miss_func", 1, 1),
      score("multi_turn_miss_param", 0, 1),
      score("multi_turn_long_context", 0, 1),
    ]);
    // simple = (1 + 0.5 + 0) / 3 = 0.5; non-live = (0.5 + 0.75 + 0.25 + 0.5) / 4 = 0.5.
    expect(summary.groups.nonLive.accuracy).toBeCloseTo(0.5, 12);
    // live weights by entries: (1·1 + 0·3) / 4.
    expect(summary.groups.live.accuracy).toBeCloseTo(0.25, 12);
    expect(summary.groups.irrelevance.accuracy).toBeCloseTo(0.75, 12);
    expect(summary.groups.multiTurn.accuracy).toBeCloseTo(0.375, 12);
    // Agentic was not run: it counts 0 and the overall is partial.
    expect(summary.groups.agentic).toEqual({ accuracy: 0, complete: false });
    expect(summary.overall.accuracy).toBeCloseTo((0.5 * 10 + 0.25 * 10 + 0.75 * 10 + 0.375 * 30) / 100, 12);
    expect(summary.overall.complete).toBe(false);
    expect(summary.notRun).toEqual(["live_relevance", "web_search_base", "web_search_no_snippet", "memory_kv", "memory_vector", "memory_rec_sum"]);
  });

  it("weights a live category that was not run by its dataset size", () => {
    const summary = summarize([score("live_simple", 2, 2)], { live_multiple: 6 });
    expect(summary.groups.live).toEqual({ accuracy: 0.25, complete: false });
  });

  it("prints percentages with two decimals and flags partial groups", () => {
    expect(percent(2 / 3)).toBe("66.67%");
    const table = summaryTable(summarize([score("simple_python", 1, 1)]));
    expect(table).toContain("| simple_python | 1 | 1 | 100.00% |");
    expect(table).toContain("(partial: categories not run count 0)");
  });
});
