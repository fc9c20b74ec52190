import type { ChecklistItem } from "@envace/protocol";

/**
 * How `dependence` is honoured when a turn is scored.
 *
 * - `ignore`: as the reference implementation, dependencies play no part.
 * - `turn`: an item counts only if it passed at some step of the turn and every item it depends
 *   on counts too.
 * - `ordered`: as `turn`, and the item must pass at a step no earlier than the step at which each
 *   of its dependencies first counted (evidence first, then the claim that relies on it).
 *
 * Items in a dependency cycle never count under `turn` or `ordered`.
 */
export type DependenceMode = "ignore" | "turn" | "ordered";

/**
 * How the turn gates of several checklists combine into one decision.
 *
 * - `majority`: as the reference implementation, the next user turn is replayed unless more than
 *   half of the checklists failed a `required_for_next_turn` item.
 * - `every`: every checklist must pass all of its required items.
 */
export type GateRule = "majority" | "every";

/** The outcome of one checklist's items over one turn. */
export interface TurnItemsResult {
  /** Per item: the step at which it first counted, or `null` if it does not count. */
  countedAt: (number | null)[];
  /** Σ weight of the items that count. */
  score: number;
  /** Every `required_for_next_turn` item counts. */
  gatePassed: boolean;
}

/**
 * Score one checklist's items over one turn. `results[step][item]` is whether the item passed when
 * judged at that step; an item passes for the turn if it passed at any step.
 */
export function aggregateTurnItems(
  items: readonly ChecklistItem[],
  results: readonly (readonly boolean[])[],
  dependence: DependenceMode = "ignore",
): TurnItemsResult {
  results.forEach((row, step) => {
    if (row.length !== items.length) {
      throw new RangeError(`step ${step} has ${row.length} results for ${items.length} checklist items`);
    }
  });
  const countedAt = firstCountedSteps(items, results, dependence);
  let score = 0;
  let gatePassed = true;
  items.forEach((item, i) => {
    if (countedAt[i] !== null) score += item.weight;
    else if (item.required_for_next_turn) gatePassed = false;
  });
  return { countedAt, score, gatePassed };
}

function firstCountedSteps(items: readonly ChecklistItem[], results: readonly (readonly boolean[])[], dependence: DependenceMode): (number | null)[] {
  const firstPass = items.map((_, i) => {
    const step = results.findIndex((row) => row[i] === true);
    return step === -1 ? null : step;
  });
  if (dependence === "ignore") return firstPass;

  const index = new Map(items.map((item, i) => [item.id, i]));
  const deps = items.map((item) =>
    item.dependence.map((id) => {
      const at = index.get(id);
      if (at === undefined) throw new RangeError(`item "${item.id}" depends on unknown item "${id}"`);
      return at;
    }),
  );
  // Least fixed point from "nothing counts": each round can only lower an item's step, so this
  // terminates, and items whose dependencies never count (cycles included) stay null.
  const counted: (number | null)[] = items.map(() => null);
  for (let changed = true; changed;) {
    changed = false;
    items.forEach((_, i) => {
      const next = dependence === "turn" ? countedForTurn(i, firstPass, deps, counted) : countedInOrder(i, results, deps, counted);
      if (next !== counted[i]) {
        counted[i] = next;
        changed = true;
      }
    });
  }
  return counted;
}

function countedForTurn(i: number, firstPass: readonly (number | null)[], deps: readonly number[][], counted: readonly (number | null)[]) {
  return firstPass[i] !== null && deps[i]!.every((d) => counted[d] !== null) ? firstPass[i]! : null;
}

function countedInOrder(i: number, results: readonly (readonly boolean[])[], deps: readonly number[][], counted: readonly (number | null)[]): number | null {
  if (!deps[i]!.every((d) => counted[d] !== null)) return null;
  const earliest = Math.max(0, ...deps[i]!.map((d) => counted[d]!));
  for (let step = earliest; step < results.length; step++) if (results[step]![i] === true) return step;
  return null;
}

/** Whether the next reference user turn may be replayed, given each checklist's turn gate. */
export function combineGates(gates: readonly boolean[], rule: GateRule = "majority"): boolean {
  const failed = gates.filter((passed) => !passed).length;
  return rule === "every" ? failed === 0 : failed <= gates.length / 2;
}

/**
 * The episode score: Σ turn scores / (checklists × reference turns). A turn score is the sum over
 * checklists of Σ weight of the items that count; turns that were never reached contribute 0.
 */
export function episodeScore(turnScores: readonly number[], checklists: number, referenceTurns: number): number {
  if (checklists <= 0 || referenceTurns <= 0) {
    throw new RangeError(`episodeScore needs at least one checklist and one reference turn (got ${checklists} × ${referenceTurns})`);
  }
  return turnScores.reduce((sum, score) => sum + score, 0) / (checklists * referenceTurns);
}
