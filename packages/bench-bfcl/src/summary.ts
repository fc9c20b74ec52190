import * as z from "zod";

/** Correct and total entries of one category. */
export const CategoryScore = z.object({
  category: z.string(),
  correct: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  accuracy: z.number().min(0).max(1),
});
export type CategoryScore = z.infer<typeof CategoryScore>;

/** A group score. `complete` is false when a category it averages was not run (and counted as 0). */
export const GroupScore = z.object({ accuracy: z.number(), complete: z.boolean() });
export type GroupScore = z.infer<typeof GroupScore>;

/** BFCL v4's summary: the groups of the leaderboard and the weighted overall score. */
export const Summary = z.object({
  categories: z.array(CategoryScore),
  notRun: z.array(z.string()),
  groups: z.object({
    nonLive: GroupScore,
    live: GroupScore,
    irrelevance: GroupScore,
    multiTurn: GroupScore,
    agentic: GroupScore,
    relevance: GroupScore,
  }),
  /** Weighted 10 non-live, 10 live, 10 irrelevance, 30 multi-turn, 40 agentic; categories not run count 0. */
  overall: GroupScore,
});
export type Summary = z.infer<typeof Summary>;

/** Weights of the overall score, as upstream's leaderboard sets them. */
export const OVERALL_WEIGHTS = { nonLive: 10, live: 10, irrelevance: 10, multiTurn: 30, agentic: 40 } as const;

interface Part {
  accuracy: number;
  /** Entries, for count-weighted averages (upstream counts a category that was not run by its dataset size). */
  total: number;
  complete: boolean;
}

/**
 * Aggregate category scores the way upstream's leaderboard does: simple = mean of the three
 * languages; non-live = mean of simple, multiple, parallel, parallel_multiple; live =
 * entry-weighted mean of its four AST categories; irrelevance = mean of irrelevance and
 * live_irrelevance; multi-turn = mean of its four categories; agentic = mean of web search
 * (two) and memory (three). A category that was not run counts as 0 and makes its groups
 * incomplete. `sizes` gives the entry count of categories that were not run, for the live
 * weighting (0 when unknown).
 */
export function summarize(scores: readonly CategoryScore[], sizes: Readonly<Record<string, number>> = {}): Summary {
  const byName = new Map(scores.map((s) => [s.category, s]));
  const part = (category: string): Part => {
    const score = byName.get(category);
    return score ? { accuracy: score.accuracy, total: score.total, complete: true } : { accuracy: 0, total: sizes[category] ?? 0, complete: false };
  };
  const mean = (parts: readonly Part[]): Part => ({
    accuracy: parts.reduce((sum, p) => sum + p.accuracy, 0) / parts.length,
    total: parts.reduce((sum, p) => sum + p.total, 0),
    complete: parts.every((p) => p.complete),
  });
  const weightedByCount = (parts: readonly Part[]): Part => {
    const total = parts.reduce((sum, p) => sum + p.total, 0);
    return { accuracy: total === 0 ? 0 : parts.reduce((sum, p) => sum + p.accuracy * p.total, 0) / total, total, complete: parts.every((p) => p.complete) };
  };
  const simple = mean(["simple_python", "simple_java", "simple_javascript"].map(part));
  const nonLive = mean([simple, part("multiple"), part("parallel"), part("parallel_multiple")]);
  const live = weightedByCount(["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"].map(part));
  const irrelevance = mean([part("irrelevance"), part("live_irrelevance")]);
  const multiTurn = mean(["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"].map(part));
  const webSearch = mean(["web_search_base", "web_search_no_snippet"].map(part));
  const memory = mean(["memory_kv", "memory_vector", "memory_rec_sum"].map(part));
  const agentic = mean([webSearch, memory]);
  const relevance = part("live_relevance");
  const groups = { nonLive, live, irrelevance, multiTurn, agentic };
  const weightSum = Object.values(OVERALL_WEIGHTS).reduce((a, b) => a + b, 0);
  const overall = (Object.keys(OVERALL_WEIGHTS) as (keyof typeof OVERALL_WEIGHTS)[]).reduce(
    (acc, key) => ({ accuracy: acc.accuracy + (groups[key].accuracy * OVERALL_WEIGHTS[key]) / weightSum, complete: acc.complete && groups[key].complete }),
    { accuracy: 0, complete: true },
  );
  const group = (p: Part): GroupScore => ({ accuracy: p.accuracy, complete: p.complete });
  const allCategories = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
    "web_search_base",
    "web_search_no_snippet",
    "memory_kv",
    "memory_vector",
    "memory_rec_sum",
  ];
  return {
    categories: [...scores],
    notRun: allCategories.filter((c) => !byName.has(c)),
    groups: {
      nonLive: group(nonLive),
      live: group(live),
      irrelevance: group(irrelevance),
      multiTurn: group(multiTurn),
      agentic: group(agentic),
      relevance: group(relevance),
    },
    overall,
  };
}

/** Accuracy of a list of verdicts. */
export function categoryScore(category: string, verdicts: readonly { valid: boolean }[]): CategoryScore {
  const correct = verdicts.filter((v) => v.valid).length;
  return { category, correct, total: verdicts.length, accuracy: verdicts.length === 0 ? 0 : correct / verdicts.length };
}

/** A percentage with two decimals, as the leaderboard prints it. */
export function percent(accuracy: number): string {
  return `${(accuracy * 100).toFixed(2)}%`;
}

/** The summary as a Markdown table: categories, then groups and the overall score. */
export function summaryTable(summary: Summary): string {
  const lines = ["| category | correct | total | accuracy |", "| --- | ---: | ---: | ---: |"];
  for (const c of summary.categories) lines.push(`| ${c.category} | ${c.correct} | ${c.total} | ${percent(c.accuracy)} |`);
  lines.push("", "| group (BFCL v4) | weight | accuracy |", "| --- | ---: | ---: |");
  const row = (name: string, weight: string, g: GroupScore): string =>
    `| ${name} | ${weight} | ${percent(g.accuracy)}${g.complete ? "" : " (partial: categories not run count 0)"} |`;
  lines.push(row("non-live", "10", summary.groups.nonLive));
  lines.push(row("live", "10", summary.groups.live));
  lines.push(row("irrelevance", "10", summary.groups.irrelevance));
  lines.push(row("multi-turn", "30", summary.groups.multiTurn));
  lines.push(row("agentic", "40", summary.groups.agentic));
  lines.push(row("overall", "", summary.overall));
  lines.push(row("relevance (not weighted)", "", summary.groups.relevance));
  if (summary.notRun.length > 0) lines.push("", `Not run: ${summary.notRun.join(", ")}.`);
  return lines.join("\n");
}
