import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";
import { captureConsole, itRefuses } from "../testing/console.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "tau2", ...argv]);

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const dataDir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data", "tau2");
const haveData = existsSync(join(dataDir, "mock", "tasks.json"));
if (!haveData) console.log("skipping the τ² CLI run: τ² data not found (set ENVACE_DATA to the shared data folder, e.g. ../shared/data)");

describe("envace eval tau2", () => {
  describe("explains what is missing", () => {
    itRefuses(run, [
      [["--data", "x"], 2, "envace eval tau2: required option '--domain <name>' not specified\n(see envace eval tau2 --help)"],
      [["--domain", "retail", "--data", "x"], 2, "give --policy (or --rescore to score saved conversations)"],
      [["--domain", "nowhere", "--data", "x", "--policy", "oracle", "--out", "y"], 1, 'unknown τ² domain "nowhere" (known: retail, airline, mock, telecom)'],
    ]);
  });

  it("names a missing data folder in one line, and writes nothing", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    const out = join(dir, "run");
    expect(await run(["--domain", "mock", "--data", join(dir, "nowhere"), "--policy", "oracle", "--out", out])).toBe(1);
    expect(io.err()).toBe(
      `envace eval tau2: no τ² mock data in ${join(dir, "nowhere")}: expected ${join(dir, "nowhere", "mock", "tasks.json")} or ${join(dir, "nowhere", "tasks.json")}`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!haveData)("names a missing or malformed tasks file in one line, and writes nothing", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    const out = join(dir, "run");
    expect(await run(["--domain", "mock", "--data", dataDir, "--tasks-file", join(dir, "tasks.json"), "--policy", "oracle", "--out", out])).toBe(1);
    writeFileSync(join(dir, "tasks.json"), '[\n{"id": "a",\n');
    expect(await run(["--domain", "mock", "--data", dataDir, "--tasks-file", join(dir, "tasks.json"), "--policy", "oracle", "--out", out])).toBe(1);
    expect(io.err().split("\n")).toEqual([
      `envace eval tau2: ${join(dir, "tasks.json")}: no such file`,
      expect.stringMatching(new RegExp(`^envace eval tau2: ${join(dir, "tasks.json")}:3: not JSON \\(`)),
    ]);
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!haveData)("stops at an unreachable server with its URL, and writes nothing", async () => {
    const io = captureConsole();
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const { port } = server.address() as AddressInfo;
    await new Promise((done) => server.close(done));
    const out = join(mkdtempSync(join(tmpdir(), "tau2-cli-")), "run");
    expect(await run(["--domain", "mock", "--data", dataDir, "--policy", `openai:http://127.0.0.1:${port}/v1#m,retries=0`, "--out", out])).toBe(1);
    expect(io.err()).toMatch(new RegExp(`^envace eval tau2: http://127\\.0\\.0\\.1:${port}/v1/models: connection failed \\(.*ECONNREFUSED.*\\)$`));
    expect(io.out()).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!haveData)("runs the oracle on the mock domain, writes the run directory and prints the summary", async () => {
    const io = captureConsole();
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
    const rewards = (lines: string[]) =>
      lines
        .map((line) => JSON.parse(line) as { id: string; trial: number; reward: number | null })
        .map((e) => `${e.id}/${e.trial}:${e.reward}`)
        .sort();
    expect(rewards(again)).toEqual(rewards(entries));
  });

  it.skipIf(!haveData)("a killed run resumes to the summary of an uninterrupted one; other options are refused", async () => {
    const io = captureConsole();
    const argv = ["--domain", "mock", "--data", dataDir, "--policy", "oracle", "--trials", "2", "--seed", "3"];
    const whole = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    expect(await run([...argv, "--out", whole])).toBe(0);
    const out = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    expect(await run([...argv, "--out", out])).toBe(0);
    // Killed while writing the 20th trial's line, before the summary.
    const text = readFileSync(join(out, "entries.jsonl"), "utf8");
    writeFileSync(join(out, "entries.jsonl"), text.slice(0, text.length - 30));
    rmSync(join(out, "summary.json"));
    const logged = (): string =>
      vi
        .mocked(process.stderr.write)
        .mock.calls.map(([chunk]) => String(chunk))
        .join("");
    expect(await run([...argv, "--out", out])).toBe(0);
    expect(readFileSync(join(out, "summary.json"), "utf8")).toBe(readFileSync(join(whole, "summary.json"), "utf8"));
    expect(readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n")).toHaveLength(20);
    expect(logged()).toContain(`resuming ${out}: 19 of 20 entries already done, 1 to run`);
    expect(await run([...argv.slice(0, -1), "4", "--out", out])).toBe(2);
    expect(io.err()).toContain(`envace eval tau2: ${out} holds a run with other options (seed: 3 → 4); use another --out, or the same options to resume it`);
  });

  it.skipIf(!haveData)("says where the airline database is missing", async () => {
    const io = captureConsole();
    const out = mkdtempSync(join(tmpdir(), "tau2-cli-"));
    expect(await run(["--domain", "airline", "--data", dataDir, "--policy", "oracle", "--out", out])).toBe(1);
    expect(io.err()).toMatch(/airline[/\\]db\.json: no such file\. The airline database is not in this folder/);
  });
});
