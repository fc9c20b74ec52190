import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { JsonlAppender, readJsonlRecords } from "./jsonl-file.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "envace-jsonl-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const Row = z.object({ n: z.number() });

describe("JsonlAppender", () => {
  it("creates missing folders and writes one line per record", async () => {
    const path = join(dir, "a", "b", "rows.jsonl");
    const file = new JsonlAppender(path);
    await file.append({ n: 1 });
    await file.append({ n: 2 });
    expect(await readFile(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
  });

  it("keeps every line intact when appends race", async () => {
    const path = join(dir, "race.jsonl");
    const file = new JsonlAppender(path);
    const payload = "x".repeat(70_000);
    await Promise.all(Array.from({ length: 40 }, (_, n) => file.append({ n, payload })));
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { n: number }).n).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, n) => n));
  });

  it("never touches what an earlier process wrote, and starts a fresh line after a torn one", async () => {
    const path = join(dir, "torn.jsonl");
    await writeFile(path, '{"n":1}\n{"n":2}\n{"n":3');
    await new JsonlAppender(path).append({ n: 4 });
    expect(await readFile(path, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3\n{"n":4}\n');
    const { records, skipped } = await readJsonlRecords(path, Row);
    expect(records).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
    expect(skipped).toEqual([{ line: 3, reason: "not JSON (torn or corrupt line)" }]);
  });

  it("flushes each line to disk when durable", async () => {
    const path = join(dir, "durable.jsonl");
    await new JsonlAppender(path, { durable: true }).append({ n: 7 });
    expect(await readFile(path, "utf8")).toBe('{"n":7}\n');
  });

  it("reports a failed append to its caller without blocking later ones", async () => {
    const blocked = join(dir, "file-not-dir");
    await writeFile(blocked, "");
    const file = new JsonlAppender(join(blocked, "rows.jsonl"));
    await expect(file.append({ n: 1 })).rejects.toThrow();
    await expect(file.flush()).resolves.toBeUndefined();
  });
});

describe("readJsonlRecords", () => {
  it("reads a missing file as empty", async () => {
    expect(await readJsonlRecords(join(dir, "missing.jsonl"), Row)).toEqual({ records: [], skipped: [] });
  });

  it("skips and reports records that fail the schema", async () => {
    const path = join(dir, "mixed.jsonl");
    await writeFile(path, '{"n":1}\n\n{"n":"two"}\n');
    const { records, skipped } = await readJsonlRecords(path, Row);
    expect(records).toEqual([{ n: 1 }]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.line).toBe(3);
    expect(skipped[0]!.reason).toMatch(/^n: /);
  });
});
