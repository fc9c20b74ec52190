// Throughput of the BFCL checkers on the shared data: AST checking per single-turn file, and
// multi-turn replay. Compared, in the same run, with a plain-JSON exact-match checker (the same
// matching modes without Python's value semantics) to show what faithful scoring costs.
import { join } from "node:path";
import { toJson } from "@envace/python-text";
import { alternativesRules, matchCalls } from "@envace/rewards";
import type { FunctionCall } from "@envace/rewards";
import { isRelevanceOrIrrelevance, SINGLE_TURN_CATEGORIES, MULTI_TURN_CATEGORIES } from "./categories.js";
import { checkAst, matchModeOf } from "./checker/ast.js";
import { hasCategory, loadCategory } from "./data.js";
import type { MultiTurnEntry, SingleTurnEntry } from "./data.js";
import { decodePythonCalls, functionCallExecutionList } from "./decode.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "./multi-turn/checker.js";
import { oracleCalls } from "./oracle.js";
import { missingDataNote, sharedDataDir } from "./shared-data.js";

const data = sharedDataDir();
if (!data) {
  console.log(missingDataNote("the BFCL checker benchmark"));
  process.exit(0);
}
const bfcl = join(data, "bfcl");

/** Run `body` for at least `minMs` (after one warm-up pass) and return passes per second. */
function measure(body: () => void, minMs = 400): number {
  body();
  let passes = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    body();
    passes++;
    elapsed = performance.now() - start;
  }
  return (passes * 1000) / elapsed;
}

const rows: string[][] = [["file", "entries", "decode + AST check (entries/s)", "exact-match baseline (entries/s)"]];
let totalEntries = 0;
let totalSeconds = 0;
for (const category of SINGLE_TURN_CATEGORIES) {
  if (!hasCategory(bfcl, category)) continue;
  const entries = (await loadCategory(bfcl, category)) as SingleTurnEntry[];
  if (isRelevanceOrIrrelevance(category)) {
    // Irrelevance is scored on whether a call decodes: time the decoder on a typical refusal.
    const rate = measure(() => {
      for (const _ of entries) {
        try {
          decodePythonCalls("I cannot answer this with the functions provided.");
        } catch {
          // Expected: a refusal does not decode, which is what makes the entry correct.
        }
      }
    });
    rows.push([category, String(entries.length), (rate * entries.length).toFixed(0), "n/a"]);
    totalEntries += entries.length;
    totalSeconds += 1 / rate;
    continue;
  }
  // The oracle's output as model text, so decoding is part of what is measured.
  const texts = entries.map((entry) => `[${functionCallExecutionList(oracleCalls(entry)).join(", ")}]`);
  const rate = measure(() => {
    entries.forEach((entry, i) => {
      checkAst({ category, functions: entry.functions, output: decodePythonCalls(texts[i]!), answer: entry.answer! });
    });
  });
  // Baseline: the same matching over plain JSON values with exact equality.
  const plain = entries.map((entry) => ({
    calls: oracleCalls(entry).map((c): FunctionCall<string> => ({ name: c.name, args: new Map([...c.args].map(([k, v]) => [k, JSON.stringify(toJson(v))])) })),
    expected: (entry.answer ?? []).map((a) => ({
      name: a.name,
      params: new Map([...a.params].map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => JSON.stringify(toJson(x))) : []])),
    })),
    functions: entry.functions.map((f) => ({ name: f.name, params: new Map(Object.entries(f.parameters.properties)), required: f.parameters.required })),
  }));
  const rules = alternativesRules<string>({ equals: (a, b) => a === b, isOmissionMarker: (v) => v === '""' });
  const baseline = measure(() => {
    for (const p of plain) matchCalls(matchModeOf(category), { functions: p.functions, calls: p.calls, expected: p.expected, rules });
  });
  rows.push([category, String(entries.length), (rate * entries.length).toFixed(0), (baseline * entries.length).toFixed(0)]);
  totalEntries += entries.length;
  totalSeconds += 1 / rate;
}
rows.push(["all single-turn files", String(totalEntries), (totalEntries / totalSeconds).toFixed(0), ""]);

console.log("BFCL AST checking (this machine, one thread; other processes may share the CPU)\n");
const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
for (const row of rows) console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join("  "));

console.log("\nBFCL multi-turn replay (oracle calls through the model and gold environments, state and response checks)\n");
for (const category of MULTI_TURN_CATEGORIES) {
  if (!hasCategory(bfcl, category)) continue;
  const entries = (await loadCategory(bfcl, category)) as MultiTurnEntry[];
  const calls = entries.reduce((n, e) => n + e.groundTruth.flat().length, 0);
  const rate = measure(() => {
    for (const entry of entries) checkMultiTurn(entry, oracleMultiTurnCalls(entry));
  }, 1000);
  const seconds = 1 / rate;
  console.log(
    `${category.padEnd(22)} ${entries.length} entries, ${calls} gold calls: ${(seconds * 1000).toFixed(0)} ms per replay of the file, ` +
      `${((seconds * 1000) / entries.length).toFixed(2)} ms per entry, ${((seconds * 1e6) / (2 * calls)).toFixed(1)} µs per executed call`,
  );
}
