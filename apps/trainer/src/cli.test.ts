import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { InvariantError } from "@envace/errors";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "@envace/config";
import { UsageError } from "./faults.js";
import { closedPort, workspace } from "./testing/workspace.js";
import { commandTree, envace } from "./cli.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const cli = join(root, "apps/trainer/src/cli.ts");
const tracer = join(root, "apps/trainer/src/testing/trace-imports.mjs");

/** `envace …` as a child process, as a person runs it: exit code, stdout and stderr. */
function spawnEnvace(
  args: string[],
  env: Record<string, string> = {},
  preload: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", ...preload.flatMap((file) => ["--import", file]), cli, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
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

/** `envace` in process, with what it prints on the console and what it writes to stderr (the log, progress). */
async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[]; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  let stderr = "";
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void out.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void err.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  });
  const code = await envace(argv);
  vi.restoreAllMocks();
  return { code, out, err, stderr };
}

afterEach(() => vi.restoreAllMocks());

/** Every command in commander's tree with its path, the root ([]) first: a command added later is tested without being listed here. */
function commands(command: CommandUnknownOpts = commandTree(), path: string[] = []): { path: string[]; command: CommandUnknownOpts }[] {
  return [{ path, command }, ...command.commands.flatMap((sub) => commands(sub, [...path, sub.name()]))];
}

/** A value for each mandatory option, so that the one thing wrong with the command line is the flag under test. */
function mandatoryOptions(command: CommandUnknownOpts): string[] {
  return command.options.filter((option) => option.mandatory).flatMap((option) => [option.long!, option.argChoices?.[0] ?? "x"]);
}

describe("every command and subcommand", () => {
  const tree = commands().map(({ path, command }) => [`envace ${path.join(" ")}`.trim(), path, command] as const);

  it("covers the commands the README lists", () => {
    expect(tree.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        "envace",
        "envace train",
        "envace pretrain",
        "envace demo",
        "envace report",
        "envace eval",
        "envace eval bfcl",
        "envace eval builtin",
        "envace eval finmcp",
        "envace eval tau2",
        "envace eval vita",
        "envace serve",
      ]),
    );
  });

  it.each(tree)("%s --help shows its usage, options, the global options and an example, exit 0", async (name, path) => {
    const { code, out, err } = await run([...path, "--help"]);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    const help = out.join("\n");
    expect(help).toContain(`Usage: ${name} `);
    expect(help).toMatch(/^Options:$/m);
    expect(help).toMatch(/^ {2}--log-format <format> /m);
    expect(help).toMatch(/^Example:\n(?: {2}#.*\n)? {2}envace /m);
  });

  it.each(tree)("%s rejects an unknown flag: one line, where to read the usage, exit 2", async (name, path, command) => {
    const { code, out, err } = await run([...path, ...mandatoryOptions(command), "--no-such-flag"]);
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toEqual([`${name}: unknown option '--no-such-flag'`, `(see ${name} --help)`]);
  });

  it("lists the commands with no arguments, exit 0", async () => {
    const { code, out } = await run([]);
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(/^ {2}train \[options\] +train a policy/m);
  });

  it("keeps the options and defaults of each command", async () => {
    const builtin = (await run(["eval", "builtin", "--help"])).out.join("\n");
    for (const flag of [
      "--tasks <n>",
      "--seed <s>",
      "--split <split>",
      "--system-prompt <prompt>",
      "--rehearse-prompt <prompt>",
      "--reflect-prompt <prompt>",
      "--rehearsal <settings>",
      "--memory-budget <tokens>",
      "--safe-writes [gate]",
      "--concurrency <n>",
      "--max-turns <n>",
      "--max-prompt-tokens <n>",
      "--max-response-tokens <n>",
      "--temperature <t>",
      "--top-p <p>",
      "--no-fidelity",
      "--save-trajectories",
    ]) {
      expect(builtin).toContain(flag);
    }
    expect(builtin).toMatch(/--tasks <n> +held-out tasks \(default: 50\)/);
    const tau2 = (await run(["eval", "tau2", "--help"])).out.join("\n");
    for (const flag of [
      "--domain <name>",
      "--data <dir>",
      "--policy <spec>",
      "--user <spec>",
      "--judge <spec>",
      "--trials <k>",
      "--out <dir>",
      "--tasks <ids>",
      "--tasks-file <file>",
      "--db <file>",
      "--concurrency <n>",
      "--max-steps <n>",
      "--max-errors <n>",
      "--temperature <t>",
      "--user-temperature <t>",
      "--seed <n>",
      "--agent-instruction <file>",
      "--rescore <file>",
    ]) {
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

describe("the global log options", () => {
  it.each([
    [["--log-format", "xml", "demo"], {}, "envace: option '--log-format <format>' argument 'xml' is invalid. Allowed choices are pretty, json."],
    [
      ["--log-level", "loud", "demo"],
      {},
      "envace: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are fatal, error, warn, info, debug, trace, silent.",
    ],
    [
      ["demo"],
      { ENVACE_LOG_FORMAT: "xml" },
      "envace: option '--log-format <format>' value 'xml' from env 'ENVACE_LOG_FORMAT' is invalid. Allowed choices are pretty, json.",
    ],
  ])("%j with %j: a value it does not know is a usage error, exit 2", async (argv, env, line) => {
    vi.stubEnv("ENVACE_LOG_FORMAT", undefined);
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    try {
      const { code, out, err } = await run(argv);
      expect(code).toBe(2);
      expect(out).toEqual([]);
      expect(err).toEqual([line, "(see envace --help)"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("a failure prints one line for its kind (told by its class, never its message)", () => {
  /** `envace [global options] demo`, its command made to fail with `error`. */
  async function failing(error: Error, global: string[] = []): Promise<Awaited<ReturnType<typeof run>>> {
    vi.doMock("./commands/demo.js", () => ({ run: () => Promise.reject(error) }));
    try {
      return await run([...global, "demo"]);
    } finally {
      vi.doUnmock("./commands/demo.js");
    }
  }

  it("a usage error the command finds: its line and where to read the usage, exit 2", async () => {
    const { code, out, err } = await failing(new UsageError("--tasks names no task"));
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toEqual(["envace demo: --tasks names no task", "(see envace demo --help)"]);
  });

  it("a config or input error: the command, the file and the message, exit 1", async () => {
    const { code, err } = await failing(new ConfigError("run.yaml:3: rollout.rollouts_per_task: Invalid input"));
    expect(code).toBe(1);
    expect(err).toEqual(["envace demo: run.yaml:3: rollout.rollouts_per_task: Invalid input"]);
  });

  it.each([
    ["a TypeError", new TypeError("Cannot read properties of undefined (reading 'steps')\nmore")],
    ["an InvariantError", new InvariantError("Cannot read properties of undefined (reading 'steps')\nmore")],
  ])("a bug (%s): its first line and how to see the stack, exit 1; --log-level debug prints the stack", async (_, bug) => {
    const plain = await failing(bug);
    expect(plain.code).toBe(1);
    expect(plain.err).toEqual(["envace demo: Cannot read properties of undefined (reading 'steps')", expect.stringContaining("stack trace")]);
    const debug = await failing(bug, ["--log-level", "debug"]);
    expect(debug.code).toBe(1);
    expect(debug.err[0]).toBe("envace demo: Cannot read properties of undefined (reading 'steps')");
    expect(debug.err[1]).toMatch(/^\w*Error: Cannot read properties[\s\S]*\n\s+at .*cli\.test\.ts/);
  });

  it("with --log-format json: one JSON line, with the command, the exit code and the error's code", async () => {
    const input = await failing(new ConfigError("run.yaml:3: bad"), ["--log-format", "json", "--log-level", "silent"]);
    expect(input.code).toBe(1);
    expect(input.err).toEqual([]);
    expect(input.stderr.trimEnd().split("\n")).toHaveLength(1);
    // pino's level 50 is error; even --log-level silent keeps the failure, as the pretty format does.
    expect(JSON.parse(input.stderr)).toMatchObject({ level: 50, command: "envace demo", exitCode: 1, msg: "envace demo: run.yaml:3: bad" });
    const bug = await failing(new InvariantError("unreachable"), ["--log-format", "json"]);
    expect(bug.stderr.trimEnd().split("\n")).toHaveLength(1);
    const record = JSON.parse(bug.stderr) as { msg: string };
    expect(record).toMatchObject({ level: 50, command: "envace demo", exitCode: 1, code: "invariant" });
    expect(record.msg).toMatch(/^envace demo: unreachable\n/);
  });
});

describe("envace loads a command only when it runs", () => {
  it.each([["--help"], ["eval", "bfcl", "--help"], ["eval", "builtin", "--bogus"]])(
    "envace %s loads nothing but cli.ts and commander",
    async (...args) => {
      const trace = join(workspace(), "imports.txt");
      writeFileSync(trace, "");
      const result = await spawnEnvace(args, { ENVACE_TRACE_IMPORTS: trace }, [tracer]);
      expect(result.code).toBe(args[0] === "--help" || args[2] === "--help" ? 0 : 2);
      const loaded = linesOf(readFileSync(trace, "utf8")).filter((url) => url.startsWith("file:"));
      const outsideCommander = loaded.filter((url) => url !== `file://${cli}` && !/\/node_modules\/(commander|@commander-js\/extra-typings)\//.test(url));
      expect(loaded).toContain(`file://${cli}`);
      expect(outsideCommander).toEqual([]);
    },
    60_000,
  );
});

describe("one line for every user fault", () => {
  /** `envace eval bfcl --results` on saved outputs `text`, with --data `data` in a fresh workspace: a user fault, exit 1. */
  async function scoreSaved(text: string, data: string): Promise<{ dir: string; results: string; result: { stdout: string; stderr: string } }> {
    const dir = workspace();
    const results = join(dir, "results.jsonl");
    writeFileSync(results, text);
    const result = await spawnEnvace(["eval", "bfcl", "--data", join(dir, data), "--results", results, "--out", join(dir, "run")]);
    expect(result.code).toBe(1);
    return { dir, results, result };
  }

  it("a malformed --results file: the file and line, no stack, exit 1", async () => {
    const { dir, results, result } = await scoreSaved('{"id": "simple_python_0", "result": "[f(x=1)]"}\n{"id": "simple_python_1", "result": \n', "data");
    expect(linesOf(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^envace eval bfcl: ${results}:2: not JSON \\(.+\\)$`))]);
    expect(existsSync(join(dir, "run"))).toBe(false);
  }, 60_000);

  it("a missing --data folder: says so, writes no run directory, exit 1", async () => {
    const { dir, result } = await scoreSaved('{"id": "simple_python_0", "result": "[f(x=1)]"}\n', "nonexistent");
    expect(linesOf(result.stderr)).toEqual([
      `envace eval bfcl: ${join(dir, "nonexistent")}: no such folder (--data must be an upstream BFCL data folder, bfcl_eval/data)`,
    ]);
    expect(result.stdout).toBe("");
    expect(existsSync(join(dir, "run", "summary.json"))).toBe(false);
  }, 60_000);

  it("an unreachable model server: its URL and the error, nothing written, exit 1", async () => {
    const dir = workspace();
    const url = await closedPort();
    const result = await spawnEnvace([
      "eval",
      "bfcl",
      "--data",
      dir,
      "--category",
      "simple_python",
      "--policy",
      `openai:${url}/v1#m,retries=0`,
      "--out",
      join(dir, "run"),
    ]);
    expect(result.code).toBe(1);
    expect(linesOf(result.stderr)).toEqual([
      expect.stringMatching(new RegExp(`^envace eval bfcl: ${url}/v1/models: connection failed \\(.*ECONNREFUSED.*\\)$`)),
    ]);
    expect(existsSync(join(dir, "run"))).toBe(false);
  }, 60_000);
});
