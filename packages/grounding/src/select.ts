import { InputError } from "@envace/protocol";
import { deriveSeed } from "@envace/trajectory";
import { answerEntropy, type RehearsedCall } from "./candidates.js";

/**
 * Which rehearsed calls are grounded. `uniform`: any, drawn at random (seeded); `writes`: only
 * calls of tools that change the world (the domain's write tools), drawn at random; `uncertain`:
 * the calls whose Rehearse output was least certain (`answerEntropy`), highest first.
 */
export type Selection = "uniform" | "writes" | "uncertain";
export const SELECTIONS: readonly Selection[] = ["uniform", "writes", "uncertain"];

export interface SelectOptions {
  /** The share of the rehearsed calls to ground, 0 to 1. */
  fraction: number;
  select: Selection;
  /** Seeds the draws (derive one per step). */
  seed: number;
  /** `writes`: the tools that change the world. Required there. */
  writeTools?: readonly string[];
}

/** A uniform number in [0, 1) for draw `index` of `seed`. */
function draw(seed: number, index: number): number {
  return deriveSeed(seed, index) / 0x7fffffff;
}

/**
 * How many of `n` calls a `fraction` grounds: ⌊f·n⌋, plus one with probability f·n − ⌊f·n⌋, so
 * the expected share is exactly `fraction` however few calls a step makes.
 */
export function groundedCount(fraction: number, n: number, seed: number): number {
  const exact = fraction * n;
  const whole = Math.floor(exact);
  return whole + (draw(seed, 0) < exact - whole ? 1 : 0);
}

/** `items` in a seeded random order (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(draw(seed, i + 1) * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The calls to ground, in priority order (the order the budget admits them). The count is
 * `groundedCount(fraction, candidates.length)`; `writes` never fills it up with other calls.
 * Fraction 0 selects nothing and draws nothing.
 */
export function selectCalls(candidates: readonly RehearsedCall[], options: SelectOptions): RehearsedCall[] {
  const { fraction, select, seed } = options;
  if (!(fraction >= 0 && fraction <= 1)) throw new InputError(`grounding fraction ${fraction} is not between 0 and 1`);
  if (fraction === 0 || candidates.length === 0) return [];
  const count = groundedCount(fraction, candidates.length, seed);
  if (select === "uniform") return shuffled(candidates, seed).slice(0, count);
  if (select === "writes") {
    if (options.writeTools === undefined) throw new InputError("grounding select writes needs the domain's write tools");
    const writes = new Set(options.writeTools);
    return shuffled(
      candidates.filter((c) => writes.has(c.call.name)),
      seed,
    ).slice(0, count);
  }
  // Highest entropy first; calls without log-probabilities last; ties in trajectory order.
  const scored = candidates.map((c, i) => ({ c, i, h: answerEntropy(c.generation) ?? Number.NEGATIVE_INFINITY }));
  scored.sort((a, b) => b.h - a.h || a.i - b.i);
  return scored.slice(0, count).map((s) => s.c);
}
