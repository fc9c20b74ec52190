import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { domainCorpus } from "@envace/bench-builtin";
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import { startServer, type RunningServer } from "@envace/server";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";
import { TinyModelConfig as TinyModelSection } from "../config/schema.js";
import { TinyPolicyModel } from "../setup/tiny-model.js";

const root = fileURLToPath(new URL("../../../..", import.meta.url));
let upstream: ScriptedServer | undefined;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  child = undefined;
  await upstream?.close();
  upstream = undefined;
});

/** `envace serve …` as a process; resolves with the line it prints, or its exit code and stderr. */
function envaceServe(args: string[], env: Record<string, string> = {}): Promise<{ line: string } | { code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", "apps/trainer/src/cli.ts", "serve", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  child = proc;
  let stdout = "";
  let stderr = "";
  proc.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => {
    proc.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
      // Its own line among the JSON log lines.
      const line = stdout.split("\n").find((l) => l.startsWith("envace serve:"));
      if (line !== undefined) resolve({ line });
    });
    proc.on("exit", (code) => {
      resolve({ code, stderr });
    });
  });
}

describe("envace serve", () => {
  it("prints the URL it listens on, serves the policy there, and exits 0 on SIGTERM", async () => {
    upstream = await startScriptedServer({ script: [reply.text("From behind the server.")] });
    const started = await envaceServe(["--policy", `openai:${upstream.baseURL}#scripted-model`, "--port", "0"], { ENVACE_SERVER_TOKEN: "" });
    expect(started).toHaveProperty("line");
    const match = /^envace serve: scripted-model on (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec((started as { line: string }).line);
    expect(match).not.toBeNull();
    const client = new OpenAI({ baseURL: match![1], apiKey: "unused", maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "scripted-model", messages: [{ role: "user", content: "Hi" }] });
    expect(completion.choices[0]!.message.content).toBe("From behind the server.");
    child!.kill("SIGTERM");
    const [code] = (await once(child!, "exit")) as [number | null];
    expect(code).toBe(0);
    // Starting a process that loads the model runtimes can take long on a busy machine.
  }, 120_000);

  it("refuses to bind beyond loopback without a token: one line, exit 1", async () => {
    const result = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--host", "0.0.0.0", "--port", "0"], { ENVACE_SERVER_TOKEN: "" });
    expect(result).toEqual({
      code: 1,
      stderr:
        "envace serve: refusing to listen on 0.0.0.0 without a bearer token: set ENVACE_SERVER_TOKEN, or token_file: (or tokens:) in the server config, or bind to 127.0.0.1\n",
    });
  });

  it("refuses a short token from the environment or a token file: one line naming the source, exit 1", async () => {
    const short = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--host", "0.0.0.0", "--port", "0"], { ENVACE_SERVER_TOKEN: "letmein" });
    expect(short).toEqual({
      code: 1,
      stderr: "envace serve: ENVACE_SERVER_TOKEN: a bearer token needs at least 32 characters (this one has 7); make one with: openssl rand -hex 32\n",
    });
    const dir = await mkdtemp(join(tmpdir(), "envace-serve-token-"));
    await writeFile(join(dir, "tokens"), "letmein\n");
    const fromFile = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--token-file", join(dir, "tokens"), "--port", "0"], {
      ENVACE_SERVER_TOKEN: "",
    });
    expect(fromFile).toEqual({
      code: 1,
      stderr: `envace serve: ${join(dir, "tokens")}:1: a bearer token needs at least 32 characters (this one has 7); make one with: openssl rand -hex 32\n`,
    });
    await rm(dir, { recursive: true, force: true });
  });

  it("names a bad config file and key: exit 1", async () => {
    const result = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--config", "/nonexistent/server.yaml"]);
    expect(result).toEqual({ code: 1, stderr: "envace serve: /nonexistent/server.yaml: cannot read the server config (ENOENT)\n" });
  });
});

const dataDir = resolve(root, process.env.ENVACE_DATA ?? "../shared/data");
const haveTau2 = existsSync(join(dataDir, "tau2", "mock", "tasks.json"));
const haveBfcl = existsSync(join(dataDir, "bfcl", "BFCL_v4_simple_python.json"));
if (!haveTau2 || !haveBfcl) console.log(`skipping τ²/BFCL runs through the server: data not found under ${dataDir} (set ENVACE_DATA)`);

describe("the project's harnesses through the server fronting a tiny checkpoint", () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "envace-serve-eval-"));
    // A small untrained checkpoint: what it answers does not matter, only that every turn goes through the server.
    const section = {
      type: "tiny",
      vocab_size: 400,
      hidden_size: 16,
      intermediate_size: 32,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      max_position_embeddings: 4096,
      initializer_range: 0.02,
      pretokenizer: "gpt2",
    };
    const tiny = await TinyPolicyModel.create(TinyModelSection.parse(section), domainCorpus({ seed: 1 }), { seed: 1, rolloutEngine: "tfjs", listTools: false });
    await tiny.save(join(dir, "tiny"));
    tiny.close();
    const model = await policyFromSpec(`tiny:${join(dir, "tiny")}`);
    server = await startServer({
      policy: model.policy,
      tokenizer: model.tokenizer,
      model: "tiny",
      config: { port: 0, log_level: "silent", limits: { default_max_tokens: 12 } },
      tokens: [],
    });
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Chat completions the server answered with 200 so far. */
  const answered = async (): Promise<number> => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/envace_server_requests_total\{route="\/v1\/chat\/completions",status="200"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  };
  const policy = () => `openai:${server.url}/v1#tiny`;
  const entriesOf = async (file: string) =>
    (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("envace eval builtin", async () => {
    const before = await answered();
    const code = await envace([
      "eval",
      "builtin",
      "--policy",
      policy(),
      "--tasks",
      "2",
      "--seed",
      "3",
      "--max-turns",
      "2",
      "--max-response-tokens",
      "8",
      "--no-fidelity",
      "--out",
      join(dir, "builtin"),
    ]);
    expect(code).toBe(0);
    const entries = await entriesOf(join(dir, "builtin", "entries.jsonl"));
    expect(entries).toHaveLength(2);
    expect(entries.filter((e) => e.error !== undefined)).toEqual([]);
    expect(entries.every((e) => typeof e.termination === "string")).toBe(true);
    expect((await answered()) - before).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it.skipIf(!haveTau2)(
    "envace eval tau2 (mock domain; the model is the agent and the user)",
    async () => {
      const before = await answered();
      const code = await envace([
        "eval",
        "tau2",
        "--domain",
        "mock",
        "--data",
        join(dataDir, "tau2"),
        "--policy",
        policy(),
        "--tasks",
        "create_task_1",
        "--max-steps",
        "6",
        "--out",
        join(dir, "tau2"),
      ]);
      expect(code).toBe(0);
      const entries = await entriesOf(join(dir, "tau2", "entries.jsonl"));
      expect(entries.map((e) => e.id)).toEqual(["create_task_1"]);
      expect((await answered()) - before).toBeGreaterThanOrEqual(2);
    },
    120_000,
  );

  it.skipIf(!haveBfcl)(
    "envace eval bfcl (one simple_python entry)",
    async () => {
      const before = await answered();
      const code = await envace([
        "eval",
        "bfcl",
        "--data",
        join(dataDir, "bfcl"),
        "--category",
        "simple_python",
        "--limit",
        "1",
        "--policy",
        policy(),
        "--out",
        join(dir, "bfcl"),
      ]);
      expect(code).toBe(0);
      expect(await entriesOf(join(dir, "bfcl", "entries.jsonl"))).toHaveLength(1);
      expect((await answered()) - before).toBe(1);
    },
    120_000,
  );
});
