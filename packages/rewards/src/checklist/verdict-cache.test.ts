import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgeVerdict } from "./verdict.js";
import { VerdictCache, verdictCachePath } from "./verdict-cache.js";

const yes: JudgeVerdict = {
  high_level_understanding_of_the_question: "q",
  analysis_of_if_focus_on: "f",
  analysis_of_pass_condition: "p",
  analysis_of_failure_examples: "e",
  answer: true,
};
const no: JudgeVerdict = { ...yes, answer: false };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "envace-cache-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("VerdictCache", () => {
  it("holds verdicts in memory when given no file", async () => {
    const cache = new VerdictCache();
    await cache.set("k", yes);
    expect(await cache.get("k")).toEqual(yes);
    expect(await cache.get("other")).toBeUndefined();
  });

  it("persists to the run directory and reloads in a new instance", async () => {
    const runDir = join(dir, "run-a");
    const first = VerdictCache.inRunDir(runDir);
    await first.set("a", yes);
    await first.set("b", no);
    const second = VerdictCache.inRunDir(runDir);
    expect([await second.get("a"), await second.get("b"), await second.size()]).toEqual([yes, no, 2]);
  });

  it("writes a key once, keeping the first verdict", async () => {
    const runDir = join(dir, "run-b");
    const cache = VerdictCache.inRunDir(runDir);
    await cache.set("a", yes);
    await cache.set("a", no);
    expect(await cache.get("a")).toEqual(yes);
    expect((await readFile(verdictCachePath(runDir), "utf8")).trimEnd().split("\n")).toHaveLength(1);
  });

  it("drops a last line cut short by a crash, reporting it, and re-judges its item", async () => {
    const path = join(dir, "torn.jsonl");
    await writeFile(path, `${JSON.stringify({ key: "a", verdict: yes })}\n{"key":"c","ver`);
    const cache = new VerdictCache(path);
    expect(await cache.get("a")).toEqual(yes);
    expect(await cache.get("c")).toBeUndefined();
    expect((await cache.skipped()).map((s) => s.line)).toEqual([2]);
    await cache.set("c", no);
    expect(await readFile(path, "utf8")).toBe(`${JSON.stringify({ key: "a", verdict: yes })}\n${JSON.stringify({ key: "c", verdict: no })}\n`);
  });

  it("refuses a line that is not a verdict, naming its line and field", async () => {
    const path = join(dir, "bad.jsonl");
    await writeFile(path, `{"key":"b","verdict":{"answer":"maybe"}}\n${JSON.stringify({ key: "a", verdict: yes })}\n`);
    await expect(new VerdictCache(path).get("a")).rejects.toThrow(/bad\.jsonl:1: verdict\./);
  });
});
