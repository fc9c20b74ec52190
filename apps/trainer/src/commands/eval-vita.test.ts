import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "vita", ...argv]);

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const shared = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
const haveData = existsSync(join(shared, "vita", "delivery", "tasks_en.json")) && existsSync(join(shared, "vita-labels", "delivery.jsonl"));
if (!haveData) console.log("skipping the VitaBench replay run: data not found (set ENVACE_DATA to the shared data folder holding vita/ and vita-labels/)");

function capture(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void out.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void err.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  return { out: () => out.join("\n"), err: () => err.join("\n") };
}

afterEach(() => vi.restoreAllMocks());

describe("envace eval vita", () => {
  it("explains what is missing", async () => {
    const io = capture();
    expect(await run(["--domain", "delivery", "--data", "x", "--out", "y"])).toBe(2);
    expect(io.err()).toBe("envace eval vita: required option '--replay <file>' not specified\n(see envace eval vita --help)");
    expect(await run(["--domain", "ota", "--data", "x", "--replay", "r", "--out", "y"])).toBe(2);
    expect(io.err()).toContain("option '--domain <name>' argument 'ota' is invalid. Allowed choices are delivery, instore.");
  });

  it.skipIf(!haveData)("names a malformed calls line or an unknown task in one line, and writes nothing", async () => {
    const io = capture();
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
    const io = capture();
    const dir = mkdtempSync(join(tmpdir(), "vita-cli-"));
    const labels = readFileSync(join(shared, "vita-labels", "delivery.jsonl"), "utf8").split("\n").slice(0, 3);
    const calls = join(dir, "calls.jsonl");
    writeFileSync(calls, `${labels.join("\n")}\n`);
    const out = join(dir, "run");
    expect(await run(["--domain", "delivery", "--data", join(shared, "vita"), "--replay", calls, "--out", out])).toBe(0);
    expect(io.out()).toContain("replayed 3 of 3 tasks");
    const entries = readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
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
