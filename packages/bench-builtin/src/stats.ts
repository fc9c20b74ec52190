import type { Task } from "@envace/protocol";
import { wordsOf } from "./corpus.js";
import { renderPlain } from "./gold.js";
import { builtinMeta } from "./meta.js";
import { Family, Outcome } from "./request.js";
import { WRITE_TOOLS } from "./tools.js";

/**
 * The most characters a gold dialogue takes in plain rendering (`renderPlain`, system prompt
 * included). Chat templates add their own markup on top; tests hold every generated task to it.
 */
export const GOLD_CHAR_BUDGET = 1500;

/** Summary numbers of a numeric sample. */
export interface Spread {
  min: number;
  max: number;
  mean: number;
}

export interface TaskStats {
  tasks: number;
  families: Record<Family, number>;
  outcomes: Record<Outcome, number>;
  /** Tool calls of the gold solution per task, and how many tasks need each count. */
  calls: Spread & { histogram: Record<string, number> };
  /** Fraction of tasks whose correct behaviour is to write nothing (a precondition fails). */
  failingPreconditionFraction: number;
  /** Fraction of gold tool calls that are writes. */
  writeCallFraction: number;
  /** Characters of the gold dialogue in plain rendering (`renderPlain`), system prompt included. */
  chars: Spread;
  /** The same without the system prompt (constant per task set, often cached as a prefix). */
  charsWithoutSystem: Spread;
  /** Words (`wordsOf`) of the plain rendering: what a word-level tokenizer would emit. */
  words: Spread;
}

function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: 0, max: 0, mean: 0 };
  return { min: Math.min(...values), max: Math.max(...values), mean: values.reduce((a, b) => a + b, 0) / values.length };
}

/** Statistics of a set of built-in tasks. */
export function taskStats(tasks: readonly Task[]): TaskStats {
  const families = Object.fromEntries(Family.options.map((f) => [f, 0])) as Record<Family, number>;
  const outcomes = Object.fromEntries(Outcome.options.map((o) => [o, 0])) as Record<Outcome, number>;
  const histogram = Object.create(null) as Record<string, number>;
  const calls: number[] = [];
  const chars: number[] = [];
  const charsWithoutSystem: number[] = [];
  const words: number[] = [];
  let writes = 0;
  for (const task of tasks) {
    const meta = builtinMeta(task);
    families[meta.family]++;
    outcomes[meta.outcome]++;
    const gold = task.goldActions ?? [];
    calls.push(gold.length);
    histogram[gold.length] = (histogram[gold.length] ?? 0) + 1;
    writes += gold.filter((call) => (WRITE_TOOLS as readonly string[]).includes(call.name)).length;
    const dialogue = task.reference ?? task.messages;
    const text = renderPlain(dialogue);
    chars.push(text.length);
    charsWithoutSystem.push(renderPlain(dialogue.filter((m) => m.role !== "system")).length);
    words.push(wordsOf(text).length);
  }
  const totalCalls = calls.reduce((a, b) => a + b, 0);
  return {
    tasks: tasks.length,
    families,
    outcomes,
    calls: { ...spread(calls), histogram },
    failingPreconditionFraction: tasks.length === 0 ? 0 : (tasks.length - outcomes.ok) / tasks.length,
    writeCallFraction: totalCalls === 0 ? 0 : writes / totalCalls,
    chars: spread(chars),
    charsWithoutSystem: spread(charsWithoutSystem),
    words: spread(words),
  };
}
