import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closedPort, workspace } from "./testing/workspace.js";
import { envace } from "./cli.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const cli = join(root, "apps/trainer/src/cli.ts");
const tracer = join(root, "apps/trainer/src/testing/trace-imports.mjs");

/** `envace …` as a child process, as a person runs it: exit code, stdout and stderr. */
function spawnEnvace(args: string[], env: Record<string, string> = {}, preload: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", ...preload.flatMap((file) => ["--import", file]), cli, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ENVACE_DEBUG: "", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The lines printed on stderr, as a person sees them. */
function linesOf(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}


/** `envace` in process, with what it prints on the console. */
async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void out.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void err.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  const code = await envace(argv);
  vi.restoreAllMocks();
  return { code, out, err };
}

afterEach(() => vi.restoreAllMocks());

describe("envace --help", () => {
  it.each([["train"], ["demo"], ["report"], ["eval"], ["eval", "bfcl"], ["eval", "builtin"], ["eval", "tau2"]])("envace %s --help shows its usage, options and an example, exit 0", async (...path) => {
    const { code, out, err } = await run([...path, "--help"]);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    const help = out.join("\n");
    expect(help).toContain(`Usage: envace ${path.join(" ")} `);
    expect(help).toMatch(/^Options:$/m);
    expect(help).toMatch(/^Example:\n(?: {2}#.*\n)? {2}envace /m);
  });

  it("lists the commands with no arguments, exit 0", async () => {
    const { code, out } = await run([]);
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(/^ {2}train \[options\] +train a policy/m);
  });

  it("keeps the options and defaults of each command", async () => {
    const builtin = (await run(["eval", "builtin", "--help"])).out.join("\n");
    for (const flag of ["--tasks <n>", "--seed <s>", "--split <split>", "--system-prompt <prompt>", "--rehearse-prompt <prompt>", "--rehearsal <settings>", "--memory-budget <tokens>", "--safe-writes [gate]", "--concurrency <n>", "--max-turns <n>", "--max-prompt-tokens <n>", "--max-response-tokens <n>", "--temperature <t>", "--top-p <p>", "--no-fidelity", "--save-trajectories"]) {
      expect(builtin).toContain(flag);
    }
    expect(builtin).toMatch(/--tasks <n> +held-out tasks \(default: 50\)/);
    const tau2 = (await run(["eval", "tau2", "--help"])).out.join("\n");
    for (const flag of ["--domain <name>", "--data <dir>", "--policy <spec>", "--user <spec>", "--judge <spec>", "--trials <k>", "--out <dir>", "--tasks <ids>", "--tasks-file <file>", "--db <file>", "--concurrency <n>", "--max-steps <n>", "--max-errors <n>", "--temperature <t>", "--user-temperature <t>", "--seed <n>", "--agent-instruction <file>", "--rescore <file>"]) {
      expect(tau2).toContain(flag);
    }
    const train = (await run(["train", "--help"])).out.join("\n");
    expect(train).toMatch(/--preset <name>[\s\S]*\(default: "default"\)/);
  });
});

describe("a command line that cannot run", () => {
  it.each([
    [["eval", "bfcl", "--data", "d", "--out", "o", "--policy", "oracle", "--bogus"], "envace eval bfcl: unknown option '--bogus'"],
    [["report", "--bogus", "runs/x"], "envace report: unknown option '--bogus'"],
    [["demo", "--jsn"], "envace demo: unknown option '--jsn' (Did you mean --json?)"],
    [["train", "--preset", "default"], "envace train: required option '--out <dir>' not specified"],
    [["eval", "tau2", "--data", "x"], "envace eval tau2: required option '--domain <name>' not specified"],
    [["eval", "builtin", "--out", "o"], "envace eval builtin: required option '--policy <spec>' not specified"],
    [["report"], "envace report: missing required argument 'run dirs'"],
    [["bogus"], "envace: unknown command 'bogus'"],
  ])("%j prints one line and where to read the usage, exit 2", async (argv, line) => {
    const { code, out, err } = await run(argv);
    expect(code).toBe(2);
    expect(out).toEqual([]);
    const path = line.slice(0, line.indexOf(":"));
    expect(err).toEqual([line, `(see ${path} --help)`]);
  });
});

describe("envace loads a command only when it runs", () => {
  it.each([["--help"], ["eval", "bfcl", "--help"], ["eval", "builtin", "--bogus"]])("envace %s loads nothing but cli.ts and commander", async (...args) => {
    const trace = join(workspace(), "imports.txt");
    writeFileSync(trace, "");
    const result = await spawnEnvace(args, { ENVACE_TRACE_IMPORTS: trace }, [tracer]);
    expect(result.code).toBe(args[0] === "--help" || args[2] === "--help" ? 0 : 2);
    const loaded = linesOf(readFileSync(trace, "utf8")).filter((url) => url.startsWith("file:"));
    const outsideCommander = loaded.filter((url) => url !== `file://${cli}` && !/\/node_modules\/(commander|@commander-js\/extra-typings)\//.test(url));
    expect(loaded).toContain(`file://${cli}`);
    expect(outsideCommander).toEqual([]);
  }, 60_000);
});

describe("one line for every user fault", () => {
  it("a malformed --results file: the file and line, no stack, exit 1", async () => {
    const dir = workspace();
    const results = join(dir, "results.jsonl");
    writeFileSync(results, '{"id": "simple_python_0", "result": "[f(x=1)]"}\n{"id": "simple_python_1", "result": \n');
    const result = await spawnEnvace(["eval", "bfcl", "--data", join(dir, "data"), "--results", results, "--out", join(dir, "run")]);
    expect(result.code).toBe(1);
    expect(linesOf(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^envace eval bfcl: ${results}:2: not JSON \\(.+\\)$`))]);
    expect(existsSync(join(dir, "run"))).toBe(false);
  }, 60_000);

  it("a missing --data folder: says so, writes no run directory, exit 1", async () => {
    const dir = workspace();
    const results = join(dir, "results.jsonl");
    writeFileSync(results, '{"id": "simple_python_0", "result": "[f(x=1)]"}\n');
    const result = await spawnEnvace(["eval", "bfcl", "--data", join(dir, "nonexistent"), "--results", results, "--out", join(dir, "run")]);
    expect(result.code).toBe(1);
    expect(linesOf(result.stderr)).toEqual([`envace eval bfcl: ${join(dir, "nonexistent")}: no such folder (--data must be an upstream BFCL data folder, bfcl_eval/data)`]);
    expect(result.stdout).toBe("");
    expect(existsSync(join(dir, "run", "summary.json"))).toBe(false);
  }, 60_000);

  it("an unreachable model server: its URL and the error, nothing written, exit 1", async () => {
    const dir = workspace();
    const url = await closedPort();
    const result = await spawnEnvace(["eval", "bfcl", "--data", dir, "--category", "simple_python", "--policy", `openai:${url}/v1#m,retries=0`, "--out", join(dir, "run")]);
    expect(result.code).toBe(1);
    expect(linesOf(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^envace eval bfcl: ${url}/v1/models: connection failed \\(.*ECONNREFUSED.*\\)$`))]);
    expect(existsSync(join(dir, "run"))).toBe(false);
  }, 60_000);
});
