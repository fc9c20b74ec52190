import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envace } from "../cli.js";
import { captureConsole, itRefuses } from "../testing/console.js";
import { compareEvaluations, type Comparison } from "./compare.js";

const root = mkdtempSync(join(tmpdir(), "envace-compare-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const OPTIONS = { benchmark: "builtin", domainVersion: 2, tasks: 4, seed: 1, split: "test", temperature: 0.6 };

/** A probed call: whether the Rehearse role got its key set and status right, and whether it really failed. */
interface Call {
  keys: boolean;
  status: boolean;
  failed?: boolean;
  exact?: boolean;
  refused?: boolean;
}

/** An evaluation folder as `envace eval builtin` writes it, with only what compare reads filled in with meaning. */
function evaluation(name: string, policy: string, tasks: [id: string, success: boolean, calls: Call[]][], options: Record<string, unknown> = OPTIONS): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "options.json"), JSON.stringify({ ...options, policy }));
  const lines = tasks.map(([taskId, success, calls]) =>
    JSON.stringify({
      setting: "none",
      memoryBudget: null,
      safeWrites: false,
      taskId,
      success,
      reward: success ? 1 : 0,
      verdict: null,
      termination: "agent_stop",
      tokens: { total: 1, rehearsal: 0, committed: 1, probes: 0, byRole: {}, estimated: false },
      environmentCalls: calls.length,
      rehearsalEnvironmentCalls: 0,
      rehearsal: null,
      gate: { events: 0, changed: 0 },
      fidelity: calls.map((c) => ({
        tool: "pay",
        answer: c.refused === true ? "refused" : "model",
        exact: c.exact ?? false,
        keys: c.keys,
        status: c.status,
        failed: c.failed ?? false,
      })),
      durationMs: 1,
    }),
  );
  writeFileSync(join(dir, "entries.jsonl"), `${lines.join("\n")}\n`);
  return dir;
}

const ok = { keys: true, status: true };
const wrongKeys = { keys: false, status: true };
const missedFailure = { keys: true, status: false, failed: true };
const caughtFailure = { keys: true, status: true, failed: true };

// Seed 1: the baseline solves t1 only; the arm t1 and t2. Entries in another order than the
// baseline's, as concurrent evaluations append them.
const base1 = evaluation("base-1", "tiny:a", [
  ["t1", true, [ok, ok]],
  ["t2", false, [wrongKeys, missedFailure]],
  ["t3", false, [missedFailure, { ...ok, refused: true }]],
]);
const arm1 = evaluation("arm-1", "tiny:b", [
  ["t3", false, [caughtFailure]],
  ["t1", true, [ok, { ...ok, exact: true }]],
  ["t2", true, [ok, caughtFailure, ok]],
]);
// Seed 2: one task, solved by neither.
const base2 = evaluation("base-2", "tiny:a", [["u1", false, [wrongKeys]]], { ...OPTIONS, seed: 2 });
const arm2 = evaluation("arm-2", "tiny:b", [["u1", false, [wrongKeys, missedFailure]]], { ...OPTIONS, seed: 2 });

const rate = (c: Comparison, metric: string) => c.rates.find((r) => r.metric === metric)!;

describe("compareEvaluations", () => {
  const comparison = compareEvaluations({ baseline: [base1, base2], arm: [arm1, arm2], setting: "none", resamples: 500, seed: 1 });

  it("pairs tasks by id across the seeds' folders, and refuses unpaired folders", () => {
    expect(() => compareEvaluations({ baseline: [base1, base2], arm: [arm1], setting: "none", resamples: 10, seed: 1 })).toThrow(
      "compare: 2 baseline folders but 1 arm folders; give one of each per seed, in the same order",
    );
    expect(comparison).toMatchObject({ setting: "none", pairs: 2, tasks: 4 });
  });

  it("rates success over tasks and fidelity over probed calls, refused answers left out", () => {
    // By hand. Success: baseline 1/4, arm 2/4, difference +0.25.
    const success = rate(comparison, "success");
    expect(success.of).toEqual({ baseline: 4, arm: 4 });
    expect(success.baseline!.rate).toBe(0.25);
    expect(success.arm!.rate).toBe(0.5);
    expect(success.difference!.rate).toBeCloseTo(0.25, 12);
    // Key set: baseline calls 2 + 2 + 1 (the refused one left out) + 1 = 6, right on 2 + 1 + 1 + 0 = 4;
    // arm calls 1 + 2 + 3 + 2 = 8, right on 1 + 2 + 3 + 1 = 7.
    const keys = rate(comparison, "fidelity keys");
    expect(keys.of).toEqual({ baseline: 6, arm: 8 });
    expect(keys.baseline!.rate).toBeCloseTo(4 / 6, 12);
    expect(keys.arm!.rate).toBeCloseTo(7 / 8, 12);
    expect(keys.difference!.rate).toBeCloseTo(7 / 8 - 4 / 6, 12);
    // Exact: only the arm's one exact call.
    expect(rate(comparison, "fidelity exact").baseline!.rate).toBe(0);
    expect(rate(comparison, "fidelity exact").arm!.rate).toBeCloseTo(1 / 8, 12);
    // Status: baseline right on 2 + 1 + 0 + 1 = 4 of 6; arm on 1 + 2 + 3 + 1 = 7 of 8.
    expect(rate(comparison, "fidelity status").arm!.rate).toBeCloseTo(7 / 8, 12);
    expect(rate(comparison, "fidelity status").baseline!.rate).toBeCloseTo(4 / 6, 12);
    // Failure recall: the baseline's real failures (t2, t3) all missed, 0 of 2; the arm caught
    // those of t3 and t2 and missed u1's, 2 of 3.
    const recall = rate(comparison, "failure recall");
    expect(recall.of).toEqual({ baseline: 2, arm: 3 });
    expect(recall.baseline!.rate).toBe(0);
    expect(recall.arm!.rate).toBeCloseTo(2 / 3, 12);
    expect(recall.difference!.rate).toBeCloseTo(2 / 3, 12);
  });

  it("brackets every observed difference with its interval", () => {
    for (const r of comparison.rates) {
      expect(r.difference!.low).toBeLessThanOrEqual(r.difference!.rate + 1e-12);
      expect(r.difference!.high).toBeGreaterThanOrEqual(r.difference!.rate - 1e-12);
    }
  });

  it("compares a folder with itself as no difference at all", () => {
    const same = compareEvaluations({ baseline: [base1], arm: [base1], setting: "none", resamples: 200, seed: 1 });
    for (const r of same.rates) expect(r.difference).toEqual({ rate: 0, low: 0, high: 0 });
  });
});

describe("envace compare", () => {
  const run = (argv: string[]): Promise<number> => envace(["compare", ...argv]);

  it("prints the table", async () => {
    const console = captureConsole();
    expect(await run(["--baseline", base1, base2, "--arm", arm1, arm2, "--resamples", "200"])).toBe(0);
    const lines = console.out().split("\n");
    expect(lines[0]).toBe("setting none: 4 tasks in 2 pairs of evaluations");
    expect(lines.find((l) => l.startsWith("success"))).toMatch(/^success\s+0\.250 \[\d\.\d{3}, \d\.\d{3}\] \(n 4\)\s+0\.500 \[.*\] \(n 4\)\s+\+0\.250 \[/);
    expect(lines.find((l) => l.startsWith("failure recall"))).toMatch(/0\.000 \[0\.000, 0\.000\] \(n 2\)\s+0\.667 \[.*\] \(n 3\)\s+\+0\.667/);
  });

  it("prints JSON with --json", async () => {
    const console = captureConsole();
    expect(await run(["--baseline", base1, "--arm", arm1, "--resamples", "200", "--json"])).toBe(0);
    expect(JSON.parse(console.out())).toMatchObject({ pairs: 1, tasks: 3 });
  });

  const otherTasks = evaluation("other-tasks", "tiny:b", [
    ["t1", true, [ok]],
    ["t9", true, [ok]],
    ["t3", true, [ok]],
  ]);
  const otherOptions = evaluation("other-options", "tiny:b", [["t1", true, [ok]]], { ...OPTIONS, temperature: 1 });
  const empty = join(root, "empty");
  mkdirSync(empty);
  const torn = evaluation("bad-line", "tiny:b", [["t1", true, [ok]]]);
  writeFileSync(join(torn, "entries.jsonl"), '{"setting":"none"}\n{"taskId":1}\n');

  itRefuses(run, [
    [["--baseline", base1], 2, "envace compare: required option '--arm <dirs...>' not specified"],
    [
      ["--baseline", base1, base2, "--arm", arm1],
      2,
      "envace compare: give as many --arm folders as --baseline folders, one per seed in the same order (2 and 1)",
    ],
    [["--baseline", base1, "--arm", otherTasks], 1, `compare: ${base1} and ${otherTasks} hold different tasks (2 not in both, e.g. t2)`],
    [["--baseline", base1, "--arm", otherOptions], 1, `compare: ${base1} and ${otherOptions} are evaluations with other options (temperature: 0.6 → 1)`],
    [["--baseline", base1, "--arm", empty], 2, `${empty}: not an evaluation's run directory (no options.json)`],
    [["--baseline", base1, "--arm", torn], 1, `${join(torn, "entries.jsonl")}:1: `],
    [["--baseline", base1, "--arm", arm1, "--setting", "parallel:2"], 1, `${base1}: no entries of setting parallel:2`],
  ]);
});
