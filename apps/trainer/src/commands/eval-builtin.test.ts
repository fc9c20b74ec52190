import { existsSync } from "node:fs";
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTasks, goldTrajectory } from "@envace/bench-builtin";
import type { JsonObject } from "@envace/protocol";
import { reply, startScriptedServer, type RecordedRequest, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "builtin", ...argv]);

// A real OpenAI-compatible server on loopback that plays a competent policy for the first two
// held-out tasks of seed 5: it acts as the gold solution and rehearses the gold results.
const TASKS = generateTasks({ seed: 5, count: 2, split: "test" });
const canonical = (name: string, args: JsonObject): string => `${name} ${JSON.stringify(Object.entries(args).sort(([a], [b]) => a.localeCompare(b)))}`;
const golds = TASKS.map((task) => {
  const steps = goldTrajectory(task).trajectory.steps.flatMap((s) => (s.type === "act" ? [s] : []));
  return {
    instruction: task.messages.at(-1)?.content ?? "",
    acts: steps.map((s) => s.generation.text),
    results: new Map(steps.flatMap((s) => s.outcomes.map((o) => [canonical(o.call.name, o.call.arguments), o.result] as const))),
  };
});

interface ChatBody {
  messages: { role: string; content: string | null }[];
}

function answer(request: RecordedRequest): string {
  const { messages } = request.body as ChatBody;
  const system = messages[0]?.content ?? "";
  const everything = messages.map((m) => m.content ?? "").join("\n");
  const gold = golds.find((g) => everything.includes(g.instruction));
  if (system.startsWith("You review")) return '<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment>';
  if (system.startsWith("You condense")) return '<memory>{"plan": "Look everything up, then act.", "lessons": ["Check first."]}</memory>';
  if (gold === undefined) throw new Error("unknown task");
  const simulate = (messages.at(-1)?.content ?? "").split("## Tool call to simulate\n")[1];
  if (simulate !== undefined) {
    // The compact Rehearse prompt of `envace train` is the default.
    if (system !== "You are the shop's tools. Answer the call.") throw new Error(`unexpected Rehearse instructions: ${system}`);
    const call = JSON.parse(simulate) as { name: string; arguments: JsonObject };
    const real = gold.results.get(canonical(call.name, call.arguments))!;
    return `<execution_result>${JSON.stringify(real.status === "ok" ? real.content : { error: real.error })}</execution_result>`;
  }
  return gold.acts[messages.filter((m) => m.role === "assistant").length] ?? "Done.";
}

let server: ScriptedServer;
let out: string;
let stdout: string[];
let stderr: string[];

beforeAll(async () => {
  server = await startScriptedServer({ script: (request) => reply.text(answer(request)), dialect: "openai" });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), "envace-eval-builtin-"));
  stdout = [];
  stderr = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void stdout.push(line));
  vi.spyOn(console, "error").mockImplementation((line: string) => void stderr.push(line));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(out, { recursive: true, force: true });
});

const policy = () => `openai:${server.baseURL}#scripted-model,server=openai`;
const args = (...extra: string[]) => ["--policy", policy(), "--tasks", "2", "--seed", "5", "--out", out, ...extra];
const lines = async (file: string) => (await readFile(join(out, file), "utf8")).trim().split("\n");

describe("envace eval builtin", () => {
  it("runs every setting in one invocation, writes entries and a summary, and prints the table", async () => {
    expect(await run(args("--tasks", "1", "--rehearsal", "none,parallel:1", "--rehearsal", "sequential:1", "--memory-budget", "none,60"))).toBe(0);
    const entries = (await lines("entries.jsonl")).map((line) => JSON.parse(line) as { setting: string; memoryBudget: number | null; success: boolean });
    expect(entries).toHaveLength(5);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as {
      config: { seed: number; maxPromptTokens: number };
      settings: { setting: string; memoryBudget: number | null; successRate: number; rehearsalEnvironmentCalls: number; memoryTokensPerTask: number | null }[];
    };
    expect(summary.config).toMatchObject({ seed: 5, maxPromptTokens: 12288 });
    expect(summary.settings.map((s) => `${s.setting}/${s.memoryBudget}`)).toEqual([
      "none/null",
      "parallel:1/null",
      "parallel:1/60",
      "sequential:1/null",
      "sequential:1/60",
    ]);
    expect(summary.settings.every((s) => s.successRate === 1 && s.rehearsalEnvironmentCalls === 0)).toBe(true);
    expect(summary.settings.filter((s) => s.memoryBudget === 60).every((s) => (s.memoryTokensPerTask ?? Infinity) <= 60)).toBe(true);
    const table = stdout.join("\n");
    expect(table).toMatch(/^setting\s+budget\s+gate\s+tasks\s+success/m);
    expect(table).toMatch(/^parallel:1\s+60\s+off\s+1\s+1\.000\s+1\.000\s+1\.000/m);
    expect(table).toContain("fidelity per tool (exact / keys / status)");
    expect(table).toContain("* estimated where the policy returned no token ids");
  });

  it("resumes: a second run with the same options makes no model call; a killed run resumes to the same summary", async () => {
    expect(await run(args("--rehearsal", "parallel:1"))).toBe(0);
    const whole = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { settings: unknown[] };
    const before = server.scripted.length;
    expect(await run(args("--rehearsal", "parallel:1"))).toBe(0);
    expect(server.scripted.length).toBe(before);
    expect(stderr).toContain(`${out} already holds the 2 entries asked for: nothing left to run; the summary is made again from them`);

    // Killed while writing the second episode's line, and before the summary.
    const text = await readFile(join(out, "entries.jsonl"), "utf8");
    await writeFile(join(out, "entries.jsonl"), text.slice(0, text.length - 20));
    await rm(join(out, "summary.json"));
    expect(await run(args("--rehearsal", "parallel:1"))).toBe(0);
    expect(stderr).toContain(`${join(out, "entries.jsonl")}:2: dropped a last line cut short by an interrupted write; its entry runs again`);
    expect(stderr).toContain(`resuming ${out}: 1 of 2 entries already done, 1 to run`);
    expect(server.scripted.length).toBeGreaterThan(before);
    const entries = (await lines("entries.jsonl")).map((line) => JSON.parse(line) as { taskId: string });
    expect(entries.map((e) => e.taskId).sort()).toEqual(TASKS.map((t) => t.id).sort());
    const resumed = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { settings: unknown[] };
    expect(resumed).toEqual(whole);

    // Adding a setting to a finished run evaluates only the new one.
    expect(await run(args("--rehearsal", "parallel:1", "--safe-writes"))).toBe(0);
    expect(await lines("entries.jsonl")).toHaveLength(4);
  });

  it("refuses to mix runs with different options, naming what changed", async () => {
    expect(await run(args())).toBe(0);
    expect(await run(["--policy", policy(), "--tasks", "2", "--seed", "6", "--out", out])).toBe(2);
    expect(stderr.slice(-2)).toEqual([
      `envace eval builtin: ${out} holds a run with other options (seed: 5 → 6); use another --out, or the same options to resume it`,
      "(see envace eval builtin --help)",
    ]);
  });

  it("adopts the eval-config.json of an older version holding the same options, and refuses an older folder without one", async () => {
    expect(await run(args())).toBe(0);
    const before = server.scripted.length;
    await rename(join(out, "options.json"), join(out, "eval-config.json"));
    expect(await run(args())).toBe(0);
    expect(server.scripted.length).toBe(before);
    expect(existsSync(join(out, "options.json"))).toBe(true);
    await rm(join(out, "options.json"));
    await rm(join(out, "eval-config.json"));
    expect(await run(args())).toBe(2);
    expect(stderr).toContain(
      `envace eval builtin: ${out} holds entries.jsonl and summary.json but no options.json (an older version made it, and its options cannot be checked); use another --out`,
    );
  });

  it("names a bad line of entries.jsonl in one line, and keeps the file as it was", async () => {
    expect(await run(args())).toBe(0);
    const text = await readFile(join(out, "entries.jsonl"), "utf8");
    const rows = text.split("\n");
    rows[1] = '{"setting": 3}';
    await writeFile(join(out, "entries.jsonl"), rows.join("\n"));
    stderr.length = 0;
    expect(await run(args())).toBe(1);
    expect(stderr).toEqual([expect.stringMatching(new RegExp(`^envace eval builtin: ${join(out, "entries.jsonl")}:2: setting: `))]);
    expect(await readFile(join(out, "entries.jsonl"), "utf8")).toBe(rows.join("\n"));
  });

  it("names a torn options.json in one line", async () => {
    await writeFile(join(out, "options.json"), '{"benchmark": "builtin", ');
    const before = server.requests.length;
    expect(await run(args())).toBe(1);
    expect(stderr).toEqual([expect.stringMatching(new RegExp(`^envace eval builtin: ${join(out, "options.json")}: not JSON \\(`))]);
    expect(server.requests).toHaveLength(before);
  });

  it("stops at an unreachable server with its URL, before writing anything", async () => {
    const closed = await startScriptedServer({ script: () => reply.text("unused") });
    await closed.close();
    const missing = join(out, "run");
    expect(await run(["--policy", `openai:${closed.baseURL}#m,retries=0`, "--tasks", "2", "--out", missing])).toBe(1);
    expect(stderr).toEqual([expect.stringMatching(new RegExp(`^envace eval builtin: ${closed.baseURL}/models: connection failed \\(.*ECONNREFUSED.*\\)$`))]);
    expect(existsSync(missing)).toBe(false);
    expect(stdout).toEqual([]);
  });

  it.each([
    [["--tasks", "four"], "option '--tasks <n>' argument 'four' is invalid. Expected a whole number ≥ 1."],
    [["--rehearsal", "parallel:0"], '--rehearsal: rehearsal setting "parallel:0": expected none, parallel:N or sequential:N with N ≥ 1'],
    [["--memory-budget", "lots"], "option '--memory-budget <tokens>' argument 'lots' is invalid. Expected none or a whole number of tokens ≥ 1."],
    [["--top-p", "0"], "option '--top-p <p>' argument '0' is invalid. Expected a number in (0, 1]."],
    [["--safe-writes", "maybe"], "option '--safe-writes [gate]' argument 'maybe' is invalid. Allowed choices are off, on, both."],
    [["--bogus"], "unknown option '--bogus'"],
    [["extra"], "too many arguments for 'builtin'. Expected 0 arguments but got 1."],
  ])("rejects %j with one line, where to read the usage, and exit 2", async (extra, message) => {
    const before = server.requests.length;
    expect(await run(args(...extra))).toBe(2);
    expect(stderr).toEqual([`envace eval builtin: ${message}`, "(see envace eval builtin --help)"]);
    expect(server.requests).toHaveLength(before);
  });

  it("needs a policy and an output folder", async () => {
    expect(await run(["--out", out])).toBe(2);
    expect(stderr.join("\n")).toContain("envace eval builtin: required option '--policy <spec>' not specified");
    expect(await run(["--policy", "gpt:x", "--out", out])).toBe(2);
    expect(stderr.join("\n")).toContain('unknown kind "gpt"');
  });
});
