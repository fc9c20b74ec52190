// The tasks of each step: seeded, replayable draws from the training tasks.
import { InvariantError } from "@envace/errors";
import { Rng } from "@envace/training";

/** A seeded permutation. */
export function shuffled<T>(items: T[], seed: number): T[] {
  const rng = Rng.fromSeed(seed);
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.nextUint32() % (i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * The tasks of a step, drawn from a stream of seeded permutations of the training tasks (a new
 * permutation each pass), without replacement within the step: a task that the stream offers
 * again before the step is full is deferred to the next step, so every task still comes once
 * per pass, give or take a deferral. Only when `perStep` exceeds the number of tasks does a step
 * hold a task more than once (every task as often as it fits, the rest at random); `rollouts`
 * gives such a task one larger group. A pure function of (seed, step): it replays the stream
 * from step 1, so a resumed run samples what the uninterrupted one would have.
 */
export function sampleTasks<T>(tasks: readonly T[], perStep: number, seed: number, step: number): T[] {
  // The data loaders refuse an empty file, and the config a tasks_per_step below 1.
  if (tasks.length === 0) throw new InvariantError("no training tasks");
  if (!(Number.isInteger(perStep) && perStep > 0)) throw new InvariantError(`tasks per step must be a positive integer, got ${perStep}`);
  const n = tasks.length;
  if (perStep >= n) {
    // Every task fits in every step: all of them, as many whole times as fit, then a seeded remainder.
    const whole = Math.floor(perStep / n);
    const rest = shuffled([...tasks], seed * 7_919 + step).slice(0, perStep - whole * n);
    return [...Array.from({ length: whole }, () => tasks).flat(), ...rest];
  }
  let pass = 0;
  let stream: number[] = [];
  const deferred: number[] = [];
  const next = (): number => {
    if (stream.length === 0) stream = shuffled([...tasks.keys()], seed * 7_919 + pass++).reverse();
    return stream.pop()!;
  };
  let chosen: number[] = [];
  for (let s = 1; s <= step; s++) {
    chosen = [];
    const taken = new Set<number>();
    const skipped: number[] = [];
    const offer = (i: number): void => {
      if (taken.has(i)) skipped.push(i);
      else {
        taken.add(i);
        chosen.push(i);
      }
    };
    while (deferred.length > 0 && chosen.length < perStep) offer(deferred.shift()!);
    while (chosen.length < perStep) offer(next());
    deferred.push(...skipped);
  }
  return chosen.map((i) => tasks[i]!);
}
