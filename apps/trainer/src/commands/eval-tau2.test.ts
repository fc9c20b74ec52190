import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./eval-tau2.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const dataDir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data", "tau2");
const haveData = existsSync(join(dataDir, "mock", "tasks.json"));
if (!haveData) console.log("skipping the τ² CLI run: τ² data not found (set ENVACE_DATA to the shared data folder, e.g. ../shared/data)");

function capture(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void out.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void err.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  return { out: () => out.join("\n"), err: () => err.join("\n") };
}

afterEach(() => vi.restoreAllMocks());

describe("envace eval tau2", () => {
  it("explains what is missing", async () => {
    const io = capture();
    expect(await run(["--data", "x"])).toBe(2);
    expect(io.err()).toMatch(/--domain is required[\s\S]*usage: envace eval tau2/);
    expect(await run(["--domain", "retail", "--data", "x"])).toBe(2);
    expect(io.err()).toContain("give --policy (or --rescore to score saved conversations)");
    expect(await run(["--domain", "nowhere", "--data", "x", "--policy", "oracle", "--out", "y"])).toBe(1);
    expect(io.err()).toContain('unknown τ² domain "nowhere" (known: retail, airline, mock)');
  });

  it.skipIf(!haveData)("runs the oracle on the mock domain, writes the run directory and prints the summary", async () => {
    const io = capture();
    const out = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    expect(await run(["--domain", "mock", "--data", dataDir, "--policy", "oracle", "--trials", "2", "--out", out])).toBe(0);
    expect(io.out()).toMatch(/τ² mock · oracle · 10 tasks × 2 trials/);
    expect(io.out()).toMatch(/pass\^1 \d+\.\d% {2}pass\^2 \d+\.\d%/);
    expect(io.out()).toContain("DB match 18/18");
    const entries = readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n");
    expect(entries).toHaveLength(20);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { trials: number; pass_hat_k: Record<string, number> };
    expect(summary.trials).toBe(2);
    expect(Object.keys(summary.pass_hat_k)).toEqual(["pass^1", "pass^2"]);

    // Its saved conversations re-score to the same rewards.
    const rescored = mkdtempSync(join(tmpdir(), "tau2-rescore-"));
    expect(await run(["--domain", "mock", "--data", dataDir, "--rescore", join(out, "simulations.jsonl"), "--out", rescored])).toBe(0);
    const again = readFileSync(join(rescored, "rescored-entries.jsonl"), "utf8").trim().split("\n");
    const rewards = (lines: string[]) => lines.map((line) => JSON.parse(line) as { id: string; trial: number; reward: number | null }).map((e) => `${e.id}/${e.trial}:${e.reward}`).sort();
    expect(rewards(again)).toEqual(rewards(entries));
  });

  it.skipIf(!haveData)("says where the airline database is missing", async () => {
    const io = capture();
    const out = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    expect(await run(["--domain", "airline", "--data", dataDir, "--policy", "oracle", "--out", out])).toBe(1);
    expect(io.err()).toMatch(/airline[/\\]db\.json: no such file\. The airline database is not in this folder/);
  });
});
