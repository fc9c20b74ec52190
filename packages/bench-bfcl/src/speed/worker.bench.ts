// Our side of the side-by-side benchmark (speed.bench.ts): the same work as upstream_driver.py,
// through the code `envace eval bfcl` runs, printed as the same JSON line. Bundled before it is
// run, so a whole-process time is node's start-up plus our code, not a TypeScript loader.
import { readFileSync } from "node:fs";
import { reportPasses } from "@envace/side-by-side/worker";
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

async function singleTurn(casesFile: string, dataDir: string): Promise<{ cases: SpeedCase[]; entries: Map<string, Map<string, SingleTurnEntry>> }> {
  const cases = readFileSync(casesFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SpeedCase);
  const entries = new Map<string, Map<string, SingleTurnEntry>>();
  for (const category of new Set(cases.map((c) => c.category))) {
    entries.set(category, new Map((await loadCategory(dataDir, category)).map((e) => [e.id, e as SingleTurnEntry])));
  }
  return { cases, entries };
}

function singlePass({ cases, entries }: Awaited<ReturnType<typeof singleTurn>>): number {
  let agree = 0;
  for (const c of cases) {
    const entry = entries.get(c.category)!.get(c.id)!;
    if (scoreSingleTurn(entry, decodeSingleTurnOutput(entry, c.text)).valid === c.valid) agree++;
  }
  return agree;
}

const multiPass = (entries: MultiTurnEntry[]): number => entries.filter((entry) => checkMultiTurn(entry, oracleMultiTurnCalls(entry)).valid).length;

if (process.argv[1] === import.meta.filename) {
  const [mode, ...rest] = process.argv.slice(2);
  const passes = Number(rest.at(-1));
  if (mode === "single")
    await reportPasses(
      importMs,
      passes,
      () => singleTurn(rest[0]!, rest[1]!),
      singlePass,
      (loaded) => loaded.cases.length,
    );
  else
    await reportPasses(
      importMs,
      passes,
      async () => (await loadCategory(rest[0]!, "multi_turn_base")) as MultiTurnEntry[],
      multiPass,
      (entries) => entries.length,
    );
}
