/**
 * Our side of a side-by-side benchmark: a worker runs its passes through `reportPasses`, which
 * prints the same JSON line as upstream's driver (`python/side_by_side.py`). Kept apart from the
 * orchestrator so that a worker's bundle holds the code under test and nothing else.
 */

/** What each side prints, one JSON line. */
export interface SideFigures {
  /** From the process's start (node's clock) to the worker's first line: start-up plus loading our code. */
  readonly importMs: number;
  readonly loadMs: number;
  /** Every pass, in order: the first is cold, the bench picks the warm and steady ones. */
  readonly passMs: readonly number[];
  /** Items that agreed with the labels, in the pass with the fewest. */
  readonly agree: number;
  readonly total: number;
  readonly maxRssKiB: number;
  /** Upstream only: uninstalled modules its imports needed but its work never uses, stood in for by inert ones. */
  readonly stoodIn?: readonly string[];
}

/**
 * Run `run` `passes` times after `load` and print the figures. `importMs` is `performance.now()`
 * read on the worker's first line (node's clock starts with the process).
 */
export async function reportPasses<T>(
  importMs: number,
  passes: number,
  load: () => Promise<T> | T,
  run: (loaded: T) => number,
  total: (loaded: T) => number,
): Promise<void> {
  const loadStart = performance.now();
  const loaded = await load();
  const loadMs = performance.now() - loadStart;
  const passMs: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < passes; i++) {
    const start = performance.now();
    counts.push(run(loaded));
    passMs.push(performance.now() - start);
  }
  const figures: SideFigures = { importMs, loadMs, passMs, agree: Math.min(...counts), total: total(loaded), maxRssKiB: process.resourceUsage().maxRSS };
  console.log(JSON.stringify(figures));
}
