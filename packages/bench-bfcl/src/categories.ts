import { InputError } from "@envace/protocol";

/**
 * BFCL v4's test categories, their groups, and the predicates upstream uses to route an entry
 * (by substring of its category name, so categories added upstream route the same way).
 */
export const NON_LIVE_CATEGORIES = ["simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance"] as const;
export const LIVE_CATEGORIES = ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"] as const;
export const MULTI_TURN_CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"] as const;
export const WEB_SEARCH_CATEGORIES = ["web_search_base", "web_search_no_snippet"] as const;
export const MEMORY_CATEGORIES = ["memory_kv", "memory_vector", "memory_rec_sum"] as const;
export const AGENTIC_CATEGORIES = [...MEMORY_CATEGORIES, ...WEB_SEARCH_CATEGORIES] as const;
export const SINGLE_TURN_CATEGORIES = [...NON_LIVE_CATEGORIES, ...LIVE_CATEGORIES] as const;
export const SCORING_CATEGORIES = [...SINGLE_TURN_CATEGORIES, ...MULTI_TURN_CATEGORIES, ...AGENTIC_CATEGORIES] as const;

/** Names that stand for several categories, as upstream's `--test-category` accepts them. */
export const CATEGORY_COLLECTIONS: Readonly<Record<string, readonly string[]>> = {
  all: SCORING_CATEGORIES,
  all_scoring: SCORING_CATEGORIES,
  multi_turn: MULTI_TURN_CATEGORIES,
  single_turn: SINGLE_TURN_CATEGORIES,
  live: LIVE_CATEGORIES,
  non_live: NON_LIVE_CATEGORIES,
  non_python: ["simple_java", "simple_javascript"],
  python: ["simple_python", "irrelevance", "parallel", "multiple", "parallel_multiple", ...LIVE_CATEGORIES],
  memory: MEMORY_CATEGORIES,
  web_search: WEB_SEARCH_CATEGORIES,
  agentic: AGENTIC_CATEGORIES,
};

export const isMultiTurn = (category: string): boolean => category.includes("multi_turn");
export const isAgentic = (category: string): boolean => category.includes("web_search") || category.includes("memory");
export const isLive = (category: string): boolean => category.includes("live");
export const isRelevanceOrIrrelevance = (category: string): boolean => category.includes("relevance");
export const isIrrelevance = (category: string): boolean => category.includes("irrelevance");
export const isLongContext = (category: string): boolean => category.includes("long_context") || category.includes("composite");
/** Whether some turns have an empty reference: the model should not act (miss_func, miss_param). */
export const hasMultiTurnIrrelevance = (category: string): boolean => category.includes("miss_func") || category.includes("miss_param");

/** The category of an entry id: `simple_python_12` → `simple_python`, `live_simple_3-2-1` → `live_simple`. */
export function categoryOfId(id: string): string {
  const base = id.split(":")[0]!;
  const cut = base.lastIndexOf("_");
  return cut < 0 ? base : base.slice(0, cut);
}

/** Expand names and collections into a sorted list of categories; unknown names throw. */
export function resolveCategories(names: readonly string[]): string[] {
  const found = new Set<string>();
  for (const name of names) {
    const collection = CATEGORY_COLLECTIONS[name];
    if (collection) for (const category of collection) found.add(category);
    else if ((SCORING_CATEGORIES as readonly string[]).includes(name)) found.add(name);
    else
      throw new InputError(
        `unknown BFCL category "${name}" (categories: ${SCORING_CATEGORIES.join(", ")}; collections: ${Object.keys(CATEGORY_COLLECTIONS).join(", ")})`,
      );
  }
  return [...found].sort();
}

/** The question file of a category in an upstream data folder. */
export function questionFileName(category: string): string {
  return `BFCL_v4_${category}.json`;
}
