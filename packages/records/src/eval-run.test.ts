import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError } from "@envace/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { EvalRun, optionDifferences, readRun, RunDirectoryError } from "./eval-run.js";

const root = mkdtempSync(join(tmpdir(), "envace-eval-run-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
const folder = (): string => join(root, `run-${++folders}`);

const Entry = z.object({ id: z.string(), reward: z.number() });
type Entry = z.infer<typeof Entry>;
const OPTIONS = { model: "m", temperature: 0.6, limits: { turns: 8 } };

function open(out: string, options: Record<string, unknown> = OPTIONS, extra: { legacyOptionsFile?: string } = {}): { run: EvalRun<Entry>; notices: string[] } {
  const notices: string[] = [];
  const run = EvalRun.open({ out, options, entry: Entry, key: (e) => e.id, notify: (line) => notices.push(line), ...extra });
  return { run, notices };
}

/** A toy evaluation: entry `id` scores its length; the summary is the mean over the ids asked for. */
function evaluate(out: string, ids: string[], options: Record<string, unknown> = OPTIONS): { ran: string[]; notices: string[]; summary: { mean: number } } {
  const { run, notices } = open(out, options);
  const ran = run.start(ids);
  const fresh = ran.map((id) => ({ id, reward: id.length }));
  for (const entry of fresh) run.append(entry);
  const all = ids.map((id) => run.done.get(id) ?? fresh.find((e) => e.id === id)!);
  const summary = { mean: all.reduce((sum, e) => sum + e.reward, 0) / all.length };
  run.writeSummary(summary);
  return { ran, notices, summary };
}

const lines = (file: string): string[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "");

describe("an evaluation's run directory", () => {
  it("fresh: writes options.json when the run starts, entries as they finish and the summary; nothing at open", () => {
    const out = folder();
    const { run } = open(out);
    expect(existsSync(out)).toBe(false);
    expect(run.start(["a", "bb"])).toEqual(["a", "bb"]);
    expect(JSON.parse(readFileSync(join(out, "options.json"), "utf8"))).toEqual(OPTIONS);
    run.append({ id: "a", reward: 1 });
    expect(lines(join(out, "entries.jsonl"))).toEqual(['{"id":"a","reward":1}']);
    // An empty folder is fresh too.
    const empty = folder();
    mkdirSync(empty);
    expect(evaluate(empty, ["a"]).ran).toEqual(["a"]);
  });

  it("resumes a folder with the same options: entries there are kept and skipped, counted in one line", () => {
    const out = folder();
    const whole = evaluate(folder(), ["a", "bb", "ccc"]);
    expect(whole.summary).toEqual({ mean: 2 });
    // Killed after the first entry.
    const first = open(out);
    first.run.start(["a", "bb", "ccc"]);
    first.run.append({ id: "a", reward: 1 });
    // The same options, keys listed in another order.
    const resumed = evaluate(out, ["a", "bb", "ccc"], { limits: { turns: 8 }, temperature: 0.6, model: "m" });
    expect(resumed.ran).toEqual(["bb", "ccc"]);
    expect(resumed.notices).toEqual([`resuming ${out}: 1 of 3 entries already done, 2 to run`]);
    expect(resumed.summary).toEqual(whole.summary);
    expect(lines(join(out, "entries.jsonl"))).toHaveLength(3);
  });

  it("refuses a folder made with other options, naming each difference, and changes nothing", () => {
    const out = folder();
    evaluate(out, ["a"]);
    const before = readFileSync(join(out, "entries.jsonl"), "utf8");
    const changed = { model: "n", limits: { turns: 8 }, seed: 3 };
    expect(() => open(out, changed)).toThrow(RunDirectoryError);
    expect(() => open(out, changed)).toThrow(
      `${out} holds a run with other options (model: "m" → "n", seed: (none) → 3, temperature: 0.6 → (none)); use another --out, or the same options to resume it`,
    );
    expect(readFileSync(join(out, "entries.jsonl"), "utf8")).toBe(before);
    expect(JSON.parse(readFileSync(join(out, "options.json"), "utf8"))).toEqual(OPTIONS);
  });

  it("refuses a folder with entries but no options.json (an older version's), and adopts a legacy options file that matches", () => {
    const old = folder();
    mkdirSync(old);
    writeFileSync(join(old, "entries.jsonl"), '{"id":"a","reward":1}\n');
    expect(() => open(old)).toThrow(
      `${old} holds entries.jsonl but no options.json (an older version made it, and its options cannot be checked); use another --out`,
    );
    const legacy = folder();
    mkdirSync(legacy);
    writeFileSync(join(legacy, "entries.jsonl"), '{"id":"a","reward":1}\n');
    writeFileSync(join(legacy, "eval-config.json"), JSON.stringify({ ...OPTIONS, model: "old" }));
    expect(() => open(legacy, OPTIONS, { legacyOptionsFile: "eval-config.json" })).toThrow('(model: "old" → "m")');
    writeFileSync(join(legacy, "eval-config.json"), JSON.stringify(OPTIONS));
    const { run } = open(legacy, OPTIONS, { legacyOptionsFile: "eval-config.json" });
    expect(run.start(["a", "bb"])).toEqual(["bb"]);
    expect(JSON.parse(readFileSync(join(legacy, "options.json"), "utf8"))).toEqual(OPTIONS);
  });

  it("names a torn or hand-broken options.json", () => {
    const out = folder();
    mkdirSync(out);
    writeFileSync(join(out, "options.json"), '{"model": ');
    expect(() => open(out)).toThrow(RecordError);
    expect(() => open(out)).toThrow(new RegExp(`^${join(out, "options.json")}: not JSON \\(`));
    writeFileSync(join(out, "options.json"), "[1]");
    expect(() => open(out)).toThrow(`${join(out, "options.json")}: expected a JSON object`);
  });

  it("drops a torn last entry, reports it, and runs that entry again", () => {
    const out = folder();
    evaluate(out, ["a", "bb"]);
    const text = readFileSync(join(out, "entries.jsonl"), "utf8");
    writeFileSync(join(out, "entries.jsonl"), text.slice(0, -8));
    const resumed = evaluate(out, ["a", "bb"]);
    expect(resumed.ran).toEqual(["bb"]);
    expect(resumed.notices).toEqual([
      `${join(out, "entries.jsonl")}:2: dropped a last line cut short by an interrupted write; its entry runs again`,
      `resuming ${out}: 1 of 2 entries already done, 1 to run`,
    ]);
    expect(resumed.summary).toEqual({ mean: 1.5 });
    expect(lines(join(out, "entries.jsonl"))).toEqual(['{"id":"a","reward":1}', '{"id":"bb","reward":2}']);
  });

  it("runs nothing for a finished run, and makes the same summary again", () => {
    const out = folder();
    const first = evaluate(out, ["a", "bb", "ccc", "dddd"]);
    const summary = readFileSync(join(out, "summary.json"), "utf8");
    const again = evaluate(out, ["a", "bb", "ccc", "dddd"]);
    expect(again.ran).toEqual([]);
    expect(again.notices).toEqual([`${out} already holds the 4 entries asked for: nothing left to run; the summary is made again from them`]);
    expect(again.summary).toEqual(first.summary);
    expect(readFileSync(join(out, "summary.json"), "utf8")).toBe(summary);
    // Asking for fewer entries, or more, keeps every entry there and runs only the new ones.
    expect(evaluate(out, ["a", "bb"]).summary).toEqual({ mean: 1.5 });
    expect(evaluate(out, ["a", "eeeee"]).ran).toEqual(["eeeee"]);
    expect(lines(join(out, "entries.jsonl"))).toHaveLength(5);
  });
});

describe("optionDifferences", () => {
  it("compares values by canonical JSON, whatever the order of their keys", () => {
    expect(optionDifferences({ a: { x: 1, y: [1, 2] }, b: null }, { b: null, a: { y: [1, 2], x: 1 } })).toEqual([]);
    expect(optionDifferences({ a: 1, b: undefined }, { a: 1 })).toEqual([]);
    expect(optionDifferences({ a: [1, 2] }, { a: [2, 1], c: "x" })).toEqual(["a: [1,2] → [2,1]", 'c: (none) → "x"']);
  });
});

describe("readRun", () => {
  it("reads a run's options and entries and writes nothing", () => {
    const out = folder();
    evaluate(out, ["a", "bb"]);
    const before = readFileSync(join(out, "entries.jsonl"), "utf8");
    expect(readRun(out, Entry)).toEqual({
      options: OPTIONS,
      entries: [
        { id: "a", reward: 1 },
        { id: "bb", reward: 2 },
      ],
    });
    expect(readFileSync(join(out, "entries.jsonl"), "utf8")).toBe(before);
  });

  it("refuses a folder that holds no run, and names a bad entry's line", () => {
    const out = folder();
    mkdirSync(out);
    expect(() => readRun(out, Entry)).toThrow(RunDirectoryError);
    expect(() => readRun(out, Entry)).toThrow(`${out}: not an evaluation's run directory (no options.json)`);
    evaluate(out, ["a"]);
    writeFileSync(join(out, "entries.jsonl"), '{"id":"a","reward":1}\n{"id":"b","reward":"x"}\n');
    expect(() => readRun(out, Entry)).toThrow(RecordError);
    expect(() => readRun(out, Entry)).toThrow(/entries\.jsonl:2: reward: /);
  });
});
