import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { loadCategory } from "./data.js";
import type { MultiTurnEntry } from "./data.js";
import { evaluateBfcl, readResults } from "./evaluate.js";
import { parseExpression } from "./py/syntax.js";
import { missingDataNote, sharedDataDir } from "./shared-data.js";

const data = sharedDataDir();
if (!data) console.warn(missingDataNote("BFCL evaluation runs"));
const bfcl = data ? join(data, "bfcl") : "";

function runDir(): string {
  return mkdtempSync(join(tmpdir(), "bfcl-run-"));
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.skipIf(!data)("evaluateBfcl", () => {
  it("the oracle scores 100% on simple_python, multiple and parallel", async () => {
    const outDir = runDir();
    const categories = ["simple_python", "multiple", "parallel"];
    const report = await evaluateBfcl({ dataDir: bfcl, categories, source: { kind: "oracle" }, outDir });
    expect(report.scores.map((s) => [s.category, s.accuracy])).toEqual(categories.map((c) => [c, 1]));
    const entries = lines(join(outDir, "entries.jsonl"));
    expect(entries).toHaveLength(800);
    expect(entries[0]).toEqual({ id: "simple_python_0", valid: true, error: null });
    expect(JSON.parse(readFileSync(report.summaryFile, "utf8"))).toMatchObject({
      overall: { complete: false },
      notRun: expect.arrayContaining(["web_search_base"]) as unknown,
    });
    expect(readFileSync(join(outDir, "summary.md"), "utf8")).toContain("| simple_python | 400 | 400 | 100.00% |");
  });

  it("writes each multi-turn call with its result string into entries.jsonl (the oracle's match the labels)", async () => {
    const outDir = runDir();
    await evaluateBfcl({ dataDir: bfcl, categories: ["multi_turn_base", "multi_turn_miss_func"], source: { kind: "oracle" }, outDir, limit: 10 });
    const written = new Map(lines(join(outDir, "entries.jsonl")).map((e) => [e.id, e]));
    expect(written.size).toBe(20);
    for (const category of ["multi_turn_base", "multi_turn_miss_func"]) {
      const labels = readFileSync(join(data!, "bfcl-mt-labels", `${category}.jsonl`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; turns: unknown });
      for (const label of labels.filter((l) => written.has(l.id)))
        expect(written.get(label.id)).toEqual({ id: label.id, valid: true, error: null, turns: label.turns });
    }
  });

  it("scores saved outputs in decoded form, and upstream's raw text and function-calling forms", async () => {
    const oracle = readFileSync(join(data!, "bfcl-verdicts", "simple_python", "oracle.jsonl"), "utf8");
    const outputs = join(runDir(), "results.jsonl");
    const raw = [
      JSON.stringify({ id: "simple_python_0", result: "[calculate_triangle_area(base=10, height=5)]" }),
      JSON.stringify({ id: "simple_python_1", result: [{ "math.factorial": JSON.stringify({ number: 5 }) }] }),
    ];
    writeFileSync(outputs, [...oracle.split("\n").filter(Boolean).slice(2), ...raw].join("\n"));
    const report = await evaluateBfcl({
      dataDir: bfcl,
      categories: ["simple_python", "parallel"],
      source: { kind: "results", file: outputs },
      outDir: runDir(),
    });
    expect(report.scores).toEqual([{ category: "simple_python", correct: 400, total: 400, accuracy: 1 }]);
    expect(report.skipped).toEqual([{ category: "parallel", reason: "no results for this category" }]);
  });

  it("scores an entry without a saved result as a failure", async () => {
    const outputs = join(runDir(), "results.jsonl");
    writeFileSync(outputs, `${JSON.stringify({ id: "simple_python_0", result: [{ calculate_triangle_area: { base: 10, height: 5 } }] })}\n`);
    const outDir = runDir();
    const report = await evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "results", file: outputs }, outDir });
    expect(report.scores[0]).toMatchObject({ correct: 1, total: 400 });
    expect(lines(join(outDir, "entries.jsonl"))[1]).toEqual({ id: "simple_python_1", valid: false, error: "missing: no result for this entry" });
  });

  it("scores saved multi-turn outputs: turns of steps of model text", async () => {
    const entries = (await loadCategory(bfcl, "multi_turn_base")) as MultiTurnEntry[];
    // Upstream's decoder keeps keyword arguments only, so replay entries whose gold calls use keywords.
    const keywordOnly = entries
      .filter((e) =>
        e.groundTruth.flat().every((c) => {
          const t = parseExpression(c);
          return t.kind === "call" && t.args.length === 0;
        }),
      )
      .slice(0, 5);
    expect(keywordOnly.length).toBeGreaterThan(0);
    const outputs = join(runDir(), "results.jsonl");
    writeFileSync(
      outputs,
      keywordOnly.map((e) => JSON.stringify({ id: e.id, result: e.groundTruth.map((turn) => [`[${turn.join(", ")}]`, "Done."]) })).join("\n"),
    );
    const report = await evaluateBfcl({
      dataDir: bfcl,
      categories: ["multi_turn_base"],
      source: { kind: "results", file: outputs },
      outDir: runDir(),
      limit: entries.length,
    });
    expect(report.scores[0]!.correct).toBe(keywordOnly.length);
  });

  it("names the file and line of a malformed results line", async () => {
    const outputs = join(runDir(), "results.jsonl");
    writeFileSync(outputs, `${JSON.stringify({ id: "simple_python_0", result: [] })}\n{"id": 3, "result": []}\n`);
    await expect(evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "results", file: outputs }, outDir: runDir() })).rejects.toThrow(
      RecordError,
    );
    await expect(evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "results", file: outputs }, outDir: runDir() })).rejects.toThrow(
      `${outputs}:2: id: expected a non-empty string`,
    );
  });

  it("resumes an interrupted run to the summary of an uninterrupted one: verdicts already written are kept, the rest are scored", async () => {
    const whole = await evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "oracle" }, outDir: runDir(), limit: 8 });
    const outDir = runDir();
    await evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "oracle" }, outDir, limit: 5 });
    const file = join(outDir, "entries.jsonl");
    // Cut the last line short, as a kill mid-write would.
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, text.length - 10));
    const notices: string[] = [];
    const scored: string[] = [];
    const report = await evaluateBfcl({
      dataDir: bfcl,
      categories: ["simple_python"],
      source: { kind: "oracle" },
      outDir,
      limit: 8,
      notify: (line) => notices.push(line),
      onEntry: (verdict) => scored.push(verdict.id),
    });
    expect(report.summary).toEqual(whole.summary);
    expect(report.scores[0]).toMatchObject({ correct: 8, total: 8 });
    expect(scored).toEqual(["simple_python_4", "simple_python_5", "simple_python_6", "simple_python_7"]);
    expect(notices).toEqual([
      `${file}:5: dropped a last line cut short by an interrupted write; its entry runs again`,
      `resuming ${outDir}: 4 of 8 entries already done, 4 to run`,
    ]);
    expect(readFileSync(report.summaryFile, "utf8")).toBe(readFileSync(whole.summaryFile, "utf8"));
    const written = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id: string });
    expect(written.map((e) => e.id)).toEqual([
      "simple_python_0",
      "simple_python_1",
      "simple_python_2",
      "simple_python_3",
      "simple_python_4",
      "simple_python_5",
      "simple_python_6",
      "simple_python_7",
    ]);
    // Saved results in the same folder would mix two sources: refused, naming them.
    const results = join(runDir(), "results.jsonl");
    writeFileSync(results, '{"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]"}\n');
    await expect(evaluateBfcl({ dataDir: bfcl, categories: ["simple_python"], source: { kind: "results", file: results }, outDir })).rejects.toThrow(
      `${outDir} holds a run with other options (source: {"kind":"oracle"} → {"kind":"results","file":"${results}"})`,
    );
  });
});

describe("readResults", () => {
  const resultsFile = (lines: readonly string[]): string => {
    const file = join(mkdtempSync(join(tmpdir(), "bfcl-results-")), "results.jsonl");
    writeFileSync(file, lines.join("\n"));
    return file;
  };

  it("reads one result per id, skipping blank lines", async () => {
    const results = await readResults(resultsFile(['{"id": "a", "result": "x"}', "", '{"id": "b", "result": [1, 2]}']));
    expect([...results.keys()]).toEqual(["a", "b"]);
  });

  it("names the file, line and field of a bad record", async () => {
    const cases: [string, string][] = [
      ["{not json", "not JSON"],
      ["[1, 2]", 'expected an object {"id", "result"}'],
      ['{"id": "", "result": 1}', "id: expected a non-empty string"],
      ['{"id": "a"}', "result: is missing"],
      ['{"id": "a", "result": 1}', 'id: duplicate id "a"'],
    ];
    for (const [line, message] of cases) {
      const file = resultsFile(['{"id": "a", "result": 0}', line]);
      const reading = readResults(file);
      await expect(reading).rejects.toBeInstanceOf(RecordError);
      await expect(reading).rejects.toThrow(`${file}:2: ${message}`);
    }
    await expect(readResults(join(tmpdir(), "no-such-results.jsonl"))).rejects.toThrow("cannot read");
  });
});
