// Our side of the side-by-side benchmark (speed.bench.ts): the same work as upstream_driver.py,
// through the code `envace eval bfcl` runs, printed as the same JSON line. Bundled before it is
// run, so a whole-process time is node's start-up plus our code, not a TypeScript loader.
import { readFileSync } from "node:fs";
import { loadCategory } from "../data.js";
import type { MultiTurnEntry, SingleTurnEntry } from "../data.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "../multi-turn/checker.js";
import { decodeSingleTurnOutput, scoreSingleTurn } from "../score.js";

// Node's clock starts with the process: this is start-up plus loading our code.
const importMs = performance.now();

/** One line of the cases file: a prompting model's text and upstream's verdict on it. */
export interface SpeedCase {
  readonly category: string;
  readonly id: string;
  readonly text: string;
  readonly valid: boolean;
}

/** What each side prints, one JSON line. */
export interface SideFigures {
  readonly importMs: number;
  readonly loadMs: number;
  /** Every pass, in order: the first is cold, the bench picks the warm and steady ones. */
  readonly passMs: readonly number[];
  /** Verdicts equal to the labels (single-turn) or entries valid (multi-turn gold replay). */
  readonly agree: number;
  readonly total: number;
  readonly maxRssKiB: number;
  /** Upstream only: uninstalled modules its imports needed but scoring never uses, stood in for by inert ones. */
  readonly stoodIn?: readonly string[];
}

async function singleTurn(casesFile: string, dataDir: string): Promise<{ total: number; run: () => number }> {
  const cases = readFileSync(casesFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SpeedCase);
  const entries = new Map<string, Map<string, SingleTurnEntry>>();
  for (const category of new Set(cases.map((c) => c.category))) {
    entries.set(category, new Map((await loadCategory(dataDir, category)).map((e) => [e.id, e as SingleTurnEntry])));
  }
  const run = (): number => {
    let agree = 0;
    for (const c of cases) {
      const entry = entries.get(c.category)!.get(c.id)!;
      if (scoreSingleTurn(entry, decodeSingleTurnOutput(entry, c.text)).valid === c.valid) agree++;
    }
    return agree;
  };
  return { total: cases.length, run };
}

async function multiTurn(dataDir: string): Promise<{ total: number; run: () => number }> {
  const entries = (await loadCategory(dataDir, "multi_turn_base")) as MultiTurnEntry[];
  const run = (): number => entries.filter((entry) => checkMultiTurn(entry, oracleMultiTurnCalls(entry)).valid).length;
  return { total: entries.length, run };
}

async function main(argv: readonly string[]): Promise<SideFigures> {
  const [mode, ...rest] = argv;
  const passes = Number(rest.at(-1));
  const loadStart = performance.now();
  const { total, run } = mode === "single" ? await singleTurn(rest[0]!, rest[1]!) : await multiTurn(rest[0]!);
  const loadMs = performance.now() - loadStart;
  const times: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < passes; i++) {
    const start = performance.now();
    counts.push(run());
    times.push(performance.now() - start);
  }
  return {
    importMs,
    loadMs,
    passMs: times,
    agree: Math.min(...counts),
    total,
    maxRssKiB: process.resourceUsage().maxRSS,
  };
}

if (process.argv[1] === import.meta.filename) {
  console.log(JSON.stringify(await main(process.argv.slice(2))));
}
