import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { closedPort, workspace } from "../testing/workspace.js";
import { parseConfig } from "../config/load.js";
import { readMetrics } from "../run/metrics-log.js";
import { builtinDomain } from "../setup/domain.js";
import { TinyPolicyModel } from "../setup/tiny-model.js";
import { MICRO_CONFIG } from "../testing/micro.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const cli = join(root, "apps/trainer/src/cli.ts");

function envace(args: string[]): ChildProcess & { output: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", cli, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const output = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on("close", (code, signal) => {
      resolve({ code, signal, stdout, stderr });
    });
  });
  return Object.assign(child, { output });
}

/**
 * `envace train` on a run directory that already holds a file of the user's: the run must be
 * refused (exit 1) and leave that file as it was. Returns what it printed, and the run directory.
 */
async function refusedTrain(dir: string, config: string): Promise<{ stderr: string; out: string }> {
  const out = join(dir, "run");
  mkdirSync(out);
  writeFileSync(join(out, "notes.txt"), "keep me");
  const result = await envace(["train", "--config", config, "--out", out]).output;
  expect(result.code).toBe(1);
  expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("keep me");
  return { stderr: result.stderr, out };
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("envace train", () => {
  it("refuses a bad config with a message naming the key, and leaves the run directory as it was", async () => {
    const dir = workspace();
    const config = join(dir, "bad.yaml");
    writeFileSync(config, "mode: envace\nrollout:\n  rollouts_per_task: four\n");
    const { stderr, out } = await refusedTrain(dir, config);
    expect(stderr).toContain(`${config}:3: rollout.rollouts_per_task: `);
    expect(existsSync(join(out, "config.json"))).toBe(false);
  }, 60_000);

  it("refuses a malformed data record with its file and line, and leaves the run directory as it was", async () => {
    const dir = workspace();
    const data = join(dir, "train.jsonl");
    writeFileSync(data, `${readFileSync(join(root, "apps/trainer/src/data/fixtures/cm2-train.jsonl"), "utf8")}{"uuid": "cut-off", "messages": [\n`);
    const config = join(dir, "cm2.yaml");
    writeFileSync(
      config,
      `data: { source: cm2, path: ${JSON.stringify(data)} }\nreward: { type: checklist, judge: { base_url: "http://127.0.0.1:9/v1", model: judge } }\neval: { every_steps: 0 }\n`,
    );
    const { stderr, out } = await refusedTrain(dir, config);
    expect(stderr).toContain(`envace train: ${data}:3: not JSON`);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(out, "checkpoints", "sft"))).toBe(false);
  }, 60_000);

  it("stops with a message naming an unreachable Tinker server, and leaves the run directory as it was", async () => {
    const dir = workspace();
    const micro = parseConfig(MICRO_CONFIG, "micro.yaml");
    const model = await TinyPolicyModel.create(micro.model as Extract<typeof micro.model, { type: "tiny" }>, builtinDomain(micro).corpus(), {
      seed: 1,
      rolloutEngine: "tfjs",
      listTools: false,
    });
    const folder = join(dir, "hf-model");
    await model.save(folder);
    model.close();
    const url = await closedPort();
    const config = join(dir, "tinker.yaml");
    writeFileSync(
      config,
      `init_from: null\nmodel: { type: hf, path: ${JSON.stringify(folder)}, context_tokens: 512 }\nbackend: { type: tinker, base_url: "${url}", base_model: tiny, retry_deadline_s: 1 }\n`,
    );
    const { stderr, out } = await refusedTrain(dir, config);
    expect(stderr).toMatch(new RegExp(`envace train: ${url}/api/v1/client/config: gave up after \\d+ attempts \\(last: fetch failed \\(ECONNREFUSED\\)\\)`));
    expect(existsSync(join(out, "checkpoints", "sft"))).toBe(false);
  }, 60_000);

  it("refuses an --out that holds a run of another config: one line and where to read the usage, exit 2, the run left as it was", async () => {
    const dir = workspace();
    const out = join(dir, "run");
    mkdirSync(out);
    writeFileSync(join(out, "config.json"), '{\n  "seed": 99\n}\n');
    const config = join(dir, "micro.yaml");
    writeFileSync(config, MICRO_CONFIG);
    const result = await envace(["train", "--config", config, "--out", out]).output;
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n").filter((line) => line !== "")).toEqual([
      `envace train: ${out} holds a run with a different config (${join(out, "config.json")}); use a new --out directory or the same config to resume`,
      "(see envace train --help)",
    ]);
    expect(readFileSync(join(out, "config.json"), "utf8")).toBe('{\n  "seed": 99\n}\n');
  }, 60_000);

  it("resumes after kill -9 and finishes with every step logged exactly once", async () => {
    const dir = workspace();
    const config = join(dir, "micro.yaml");
    writeFileSync(config, MICRO_CONFIG.replace("total_steps: 2", "total_steps: 4").replace("every_steps: 2", "every_steps: 3"));
    const out = join(dir, "run");
    const metrics = join(out, "metrics.jsonl");

    const first = envace(["train", "--config", config, "--out", out]);
    await waitFor(() => existsSync(metrics) && readMetrics(metrics).records.some((r) => r.kind === "train" && r.step >= 2), 120_000);
    first.kill("SIGKILL");
    expect((await first.output).signal).toBe("SIGKILL");
    const before = readMetrics(metrics)
      .records.filter((r) => r.kind === "train")
      .map((r) => r.step);
    expect(before.length).toBeGreaterThanOrEqual(2);

    const second = await envace(["train", "--config", config, "--out", out]).output;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/resuming .* after step [1-4]/);
    expect(second.stdout).toMatch(/report: .*report\.html/);
    const records = readMetrics(metrics).records;
    expect(records.filter((r) => r.kind === "train").map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(records.filter((r) => r.kind === "eval").map((r) => r.step)).toEqual([0, 3, 4]);
    const sft = records.filter((r) => r.kind === "sft").map((r) => r.step);
    expect(sft).toEqual(sft.map((_, i) => i + 1));
  }, 240_000);
});
