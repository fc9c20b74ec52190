import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCategory } from "../data.js";
import type { MultiTurnEntry } from "../data.js";
import { missingDataNote, sharedDataDir } from "../shared-data.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "./checker.js";
import { createSession, EnvironmentSet } from "./runtime.js";

const data = sharedDataDir();
if (!data) console.warn(missingDataNote("BFCL multi-turn conformance"));

interface Label {
  id: string;
  turns: { call: string; result: string }[][];
}

const CATEGORIES = ["multi_turn_base", "multi_turn_miss_func"];

describe.skipIf(!data)("the environments reproduce every upstream result string", () => {
  // A skipped suite is still collected: without the data there is nothing to load.
  if (!data) return;
  for (const category of CATEGORIES) {
    describe(category, async () => {
      const entries = new Map((await loadCategory(join(data, "bfcl"), category)).map((e) => [e.id, e as MultiTurnEntry]));
      const labels = readFileSync(join(data, "bfcl-mt-labels", `${category}.jsonl`), "utf8")
        .split("\n")
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as Label);

      it("has a label for every entry, with the entry's gold calls", () => {
        expect(labels.map((l) => l.id).sort()).toEqual([...entries.keys()].sort());
        for (const label of labels) expect(label.turns.map((turn) => turn.map((c) => c.call))).toEqual(entries.get(label.id)!.groundTruth);
      });

      it.each(labels.map((label) => [label.id, label] as const))("%s: gold calls in order on persistent instances", (_id, label) => {
        const entry = entries.get(label.id)!;
        const environments = new EnvironmentSet({
          involvedClasses: entry.involvedClasses,
          initialConfig: entry.initialConfig,
          longContext: false,
          session: createSession(),
        });
        const results = label.turns.map((turn) => turn.map((c) => ({ call: c.call, result: environments.execute(c.call) })));
        expect(results).toEqual(label.turns);
      });

      it.each(labels.map((label) => [label.id, label] as const))("%s: the oracle passes and its turns carry the label results", (_id, label) => {
        const entry = entries.get(label.id)!;
        const verdict = checkMultiTurn(entry, oracleMultiTurnCalls(entry));
        expect(verdict).toMatchObject({ valid: true });
        expect(verdict.turns).toEqual(label.turns);
      });
    });
  }
});
