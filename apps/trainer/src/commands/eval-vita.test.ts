import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startScriptedServer, type RecordedRequest } from "@envace/scripted-server";
import { describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";
import { captureConsole, itRefuses } from "../testing/console.js";

// bench-vita's small delivery task, read from its fixture file (a package's test helpers are not imported across packages).
const DELIVERY_TASK = fileURLToPath(new URL("../../../../packages/bench-vita/src/testing/fixtures/delivery-task.json", import.meta.url));
const deliveryTask = (id: string): Record<string, unknown> => ({ ...(JSON.parse(readFileSync(DELIVERY_TASK, "utf8")) as Record<string, unknown>), id });

const run = (argv: string[]): Promise<number> => envace(["eval", "vita", ...argv]);

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const shared = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
const haveData = existsSync(join(shared, "vita", "delivery", "tasks_en.json")) && existsSync(join(shared, "vita-labels", "delivery.jsonl"));
if (!haveData) console.log("skipping the VitaBench replay run: data not found (set ENVACE_DATA to the shared data folder holding vita/ and vita-labels/)");

describe("envace eval vita", () => {
  describe("explains what is missing", () => {
    itRefuses(run, [
      [
        ["--domain", "delivery", "--data", "x", "--out", "y"],
        2,
        "envace eval vita: give --replay <calls.jsonl>, or --policy <spec> with --judge <spec>\n(see envace eval vita --help)",
      ],
      [
        ["--domain", "ota", "--data", "x", "--replay", "r", "--out", "y"],
        2,
        "option '--domain <name>' argument 'ota' is invalid. Allowed choices are delivery, instore.",
      ],
    ]);
  });

  it.skipIf(!haveData)("names a malformed calls line or an unknown task in one line, and writes nothing", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "vita-cli-"));
    const out = join(dir, "run");
    const calls = join(dir, "calls.jsonl");
    writeFileSync(calls, '{"id": "10711001", "calls": []}\n{"id": "10711002", "calls": [{"name": "weather"}]}\n');
    expect(await run(["--domain", "delivery", "--data", join(shared, "vita"), "--replay", calls, "--out", out])).toBe(1);
    writeFileSync(calls, '{"id": "10711001", "calls": []}\n{"id": "no-such-task", "calls": []}\n');
    expect(await run(["--domain", "delivery", "--data", join(shared, "vita"), "--replay", calls, "--out", out])).toBe(1);
    expect(io.err().split("\n")).toEqual([
      `envace eval vita: ${calls}:2: calls[0].arguments: Invalid input: expected record, received undefined`,
      `envace eval vita: ${calls}:2: id: no task "no-such-task" in ${join(shared, "vita", "delivery", "tasks_en.json")}`,
    ]);
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!haveData)("replays labelled calls and writes upstream's answers and DB hash per task", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "vita-cli-"));
    const labels = readFileSync(join(shared, "vita-labels", "delivery.jsonl"), "utf8")
      .split("\n")
      .slice(0, 3);
    const calls = join(dir, "calls.jsonl");
    writeFileSync(calls, `${labels.join("\n")}\n`);
    const out = join(dir, "run");
    expect(await run(["--domain", "delivery", "--data", join(shared, "vita"), "--replay", calls, "--out", out])).toBe(0);
    expect(io.out()).toContain("replayed 3 of 3 tasks");
    const entries = readFileSync(join(out, "entries.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const expected = labels.map((line) => JSON.parse(line) as { id: string; final_db_hash: string; calls: { content: string; error: boolean }[] });
    expect(entries.map((entry) => [entry.id, entry.db_hash, entry.calls])).toEqual(
      expected.map((label) => [label.id, label.final_db_hash, label.calls.map(({ content, error }) => ({ content, error }))]),
    );
    // A second run keeps what is there.
    expect(await run(["--domain", "delivery", "--data", join(shared, "vita"), "--replay", calls, "--out", out])).toBe(0);
    expect(io.out()).toContain("replayed 0 of 3 tasks (3 already in the run directory, kept)");
    expect(readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
  });
});

interface ChatBody {
  messages: { role: string; content: string | null }[];
  tools?: unknown[];
  response_format?: unknown;
}

/**
 * A real OpenAI-compatible server on loopback playing all three parts: the user asks for the
 * store and then stops, the agent looks the store up and answers, the judge finds every rubric met.
 */
function play(request: RecordedRequest, storeId: string): ReturnType<typeof reply.text> {
  const body = request.body as ChatBody;
  const system = body.messages[0]?.content ?? "";
  const last = body.messages.at(-1);
  if (body.response_format !== undefined) {
    const ids = [...(last?.content ?? "").matchAll(/"rubric_idx": "(rubric_\d+)"/g)].map((m) => m[1]!);
    return reply.text(JSON.stringify({ rubrics: ids.map((id) => ({ rubric_idx: id, rubric: "r", justification: "[3] done", meetExpectation: true })) }));
  }
  if (system.startsWith("# Role Setting")) {
    const said = body.messages.filter((m) => m.role === "assistant").length;
    return reply.text(said === 0 ? "Tell me about your noodle shop." : "Thanks, that is all. ###STOP###");
  }
  if (system.startsWith("# Environment") && body.tools !== undefined && body.tools.length > 0) {
    if (last?.role === "tool") return reply.text("Here is the store you asked about.");
    return reply.toolCalls([{ name: "get_delivery_store_info", arguments: { store_id: storeId } }]);
  }
  // Rehearsal's own prompts (imagined results, reviews, the memory): a short answer is enough here.
  return reply.text('<memory>{"plan": "Look the store up.", "lessons": []}</memory>');
}

describe.skipIf(!haveData)("envace eval vita with a policy, a simulated user and a judge", () => {
  it("runs tasks end to end on loopback and writes entries and a summary with pass^k; rehearsal makes no real calls", async () => {
    const io = captureConsole();
    const tasks = JSON.parse(readFileSync(join(shared, "vita", "delivery", "tasks_en.json"), "utf8")) as {
      id: string;
      environment: { stores: Record<string, unknown> };
    }[];
    const picked = tasks.slice(0, 2);
    const storeOf = new Map(picked.map((task) => [task.id, Object.keys(task.environment.stores)[0]!]));
    const server = await startScriptedServer({
      dialect: "openai",
      script: (request) => {
        const text = JSON.stringify(request.body);
        const id = [...storeOf.keys()].find((taskId) => text.includes(storeOf.get(taskId)!.slice(0, 12))) ?? picked[0]!.id;
        return play(request, storeOf.get(id)!);
      },
    });
    try {
      const spec = `openai:${server.baseURL}#scripted-model`;
      const dir = mkdtempSync(join(tmpdir(), "vita-run-"));
      const argv = [
        "--domain",
        "delivery",
        "--data",
        join(shared, "vita"),
        "--tasks",
        picked.map((t) => t.id).join(","),
        "--policy",
        spec,
        "--judge",
        spec,
        "--trials",
        "2",
      ];
      expect(await run([...argv, "--out", join(dir, "plain")])).toBe(0);
      const entries = readFileSync(join(dir, "plain", "entries.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(entries).toHaveLength(4);
      for (const entry of entries)
        expect(entry).toMatchObject({ reward: 1, rubric_score: 1, termination: "user_stop", real_calls: 1, real_calls_during_rehearsal: 0 });
      const summary = JSON.parse(readFileSync(join(dir, "plain", "summary.json"), "utf8")) as Record<string, unknown>;
      expect(summary).toMatchObject({ tasks: 2, trials: 2, scored: 4, masked: 0, passHatK: { 1: 1, 2: 1 }, passAtK: { 1: 1, 2: 1 } });
      expect(io.out()).toContain("pass^2 100.0%");

      // Per trial: two user turns, two agent turns and one judge window.
      const chats = (): number => server.requests.filter((r) => r.path === "/v1/chat/completions").length;
      expect(chats()).toBe(4 * 5);
      expect(await run([...argv, "--trials", "1", "--rehearsal", "parallel:2", "--out", join(dir, "rehearsed")])).toBe(0);
      // The rehearsal asked the model for imagined attempts: more requests than the plain runs make.
      const rehearsalRequests = chats() - 4 * 5 - 2 * 5;
      expect(rehearsalRequests).toBeGreaterThan(0);
      const rehearsed = readFileSync(join(dir, "rehearsed", "entries.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(rehearsed).toHaveLength(2);
      for (const entry of rehearsed) expect(entry).toMatchObject({ rehearsal: "parallel:2", real_calls_during_rehearsal: 0, real_calls: 1 });
      expect(io.out()).toContain("real environment calls during rehearsal: 0");
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe("envace eval vita resuming a run directory", () => {
  it("a killed run resumes to the summary of an uninterrupted one, running only the trial whose line was cut short", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "vita-resume-"));
    const data = join(dir, "data");
    mkdirSync(join(data, "delivery"), { recursive: true });
    writeFileSync(join(data, "delivery", "tasks_en.json"), JSON.stringify([deliveryTask("T1"), deliveryTask("T2")]));
    const server = await startScriptedServer({ dialect: "openai", script: (request) => play(request, "S1") });
    try {
      const spec = `openai:${server.baseURL}#scripted-model`;
      const argv = ["--domain", "delivery", "--data", data, "--policy", spec, "--judge", spec, "--trials", "2", "--concurrency", "1"];
      expect(await run([...argv, "--out", join(dir, "whole")])).toBe(0);
      const out = join(dir, "killed");
      expect(await run([...argv, "--out", out])).toBe(0);
      const text = readFileSync(join(out, "entries.jsonl"), "utf8");
      writeFileSync(join(out, "entries.jsonl"), text.slice(0, text.length - 25));
      rmSync(join(out, "summary.json"));
      const chats = (): number => server.requests.filter((r) => r.path === "/v1/chat/completions").length;
      const before = chats();
      expect(await run([...argv, "--out", out])).toBe(0);
      // One trial again: two user turns, two agent turns, one judge window.
      expect(chats() - before).toBe(5);
      expect(readFileSync(join(out, "summary.json"), "utf8")).toBe(readFileSync(join(dir, "whole", "summary.json"), "utf8"));
      expect(readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n")).toHaveLength(4);
      const logged = vi
        .mocked(process.stderr.write)
        .mock.calls.map(([chunk]) => String(chunk))
        .join("");
      expect(logged).toContain(`resuming ${out}: 3 of 4 entries already done, 1 to run`);
      // Another rehearsal setting would mix two evaluations: refused, naming it.
      expect(await run([...argv, "--rehearsal", "parallel:2", "--out", out])).toBe(2);
      expect(io.err()).toContain(`${out} holds a run with other options (rehearsal: "none" → "parallel:2")`);
    } finally {
      await server.close();
    }
  }, 60_000);
});
