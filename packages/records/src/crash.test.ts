import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readableDirectory, recoverDirectory, replaceDirectory, writeFileAtomically } from "./atomic.js";
import { JsonLinesFile, readJsonLines, type TornLine } from "./json-lines.js";
import { checkpointFiles, fileContents, lineOf } from "./testing/crash-fixtures.js";

const Line = z.object({ n: z.number().int(), text: z.string() });

/*
 * Fault injection: a writer runs in a child process, stops at one crash point and is killed there
 * with SIGKILL by this process; what it leaves is then read as a load or a resume would read it.
 * A kill keeps what reached the page cache, so this checks the order of the steps (what is visible
 * under which name when); the fsyncs between them carry that order to the disk.
 */

const root = mkdtempSync(join(tmpdir(), "envace-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const child = join(import.meta.dirname, "testing", "crash-child.ts");

/** Run the writer `scenario` on `path` until `point` (or to the end for "none"); kill it there. */
function runWriter(scenario: string, path: string, point: string): Promise<void> {
  const writer = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", child, scenario, path, point], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  writer.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  writer.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out === `at ${point}\n`) writer.kill("SIGKILL");
  });
  return new Promise((resolve, reject) => {
    writer.on("error", reject);
    writer.on("exit", (code, signal) => {
      try {
        if (point === "none") expect({ out, code, err }).toEqual({ out: "finished\n", code: 0, err: "" });
        else expect({ out, signal, err }).toEqual({ out: `at ${point}\n`, signal: "SIGKILL", err: "" });
        resolve();
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

function folder(name: string): string {
  return mkdtempSync(join(root, `${name}-`));
}

describe("a writer killed at each step", { timeout: 60_000 }, () => {
  it("of a whole-file write leaves the old file or the new one, whole", async () => {
    // The rename is the moment the new contents take the name.
    const cases = [
      ["file:written", 1],
      ["file:synced", 1],
      ["file:renamed", 2],
      ["file:done", 2],
    ] as const;
    await Promise.all(
      cases.map(async ([point, version]) => {
        const dir = folder("file");
        const path = join(dir, "summary.json");
        writeFileAtomically(path, fileContents(1));
        await runWriter("file", path, point);
        expect(readFileSync(path, "utf8") === fileContents(version), point).toBe(true);
        // Besides the file, at most the killed writer's temporary file remains, under a hidden name.
        const others = readdirSync(dir).filter((name) => name !== "summary.json");
        expect(
          others.every((name) => /^\.summary\.json\.\d+-[0-9a-f]{8}\.tmp$/.test(name)),
          point,
        ).toBe(true);
        expect(others.length, point).toBe(version === 1 ? 1 : 0);
      }),
    );
  });

  it("of a checkpoint swap leaves a complete checkpoint, the old one until the new one is renamed in", async () => {
    const cases = [
      ["fill:half", 1],
      ["dir:synced", 1],
      ["dir:old-moved", 1],
      ["dir:renamed", 2],
      ["dir:done", 2],
    ] as const;
    await Promise.all(
      cases.map(async ([point, step]) => {
        const dir = folder("dir");
        const checkpoint = join(dir, "step-000001");
        await replaceDirectory(checkpoint, fillWith(1));
        await runWriter("dir", checkpoint, point);
        // A load, which changes nothing on disk, reads one whole checkpoint.
        if (point === "dir:old-moved") expect(existsSync(checkpoint)).toBe(false);
        expect(readCheckpoint(readableDirectory(checkpoint)), point).toBe(step);
        // A resume puts the name back in order and leaves nothing beside it.
        recoverDirectory(checkpoint);
        expect(readdirSync(dir), point).toEqual(["step-000001"]);
        expect(readCheckpoint(checkpoint), point).toBe(step);
        await replaceDirectory(checkpoint, fillWith(3));
        expect(readCheckpoint(checkpoint), point).toBe(3);
        expect(readdirSync(dir), point).toEqual(["step-000001"]);
      }),
    );
  });

  it("of an append loses at most the record in flight, and a resume redoes only that one", async () => {
    const cases = ["append:written#2", "append:done#2", "append:written#3"];
    await Promise.all(
      cases.map(async (point) => {
        const path = join(folder("jsonl"), "entries.jsonl");
        await runWriter("jsonl", path, point);
        const written = Number(point.split("#")[1]);
        expect(
          JsonLinesFile.open(path, Line).records.map((r) => r.n),
          point,
        ).toEqual(Array.from({ length: written }, (_, i) => i + 1));
        await runWriter("jsonl", path, "none");
        expect(readFileSync(path, "utf8"), point).toBe(linesOf([1, 2, 3, 4]));
      }),
    );
  });

  it("in the middle of a line leaves a torn tail that a resume cuts off with a report, and a user's reader refuses", async () => {
    const path = join(folder("torn"), "entries.jsonl");
    await runWriter("torn", path, "torn");
    const tornText = readFileSync(path, "utf8").slice(linesOf([1]).length);
    expect(tornText.length).toBeGreaterThan(0);
    expect(tornText.includes("\n")).toBe(false);
    expect(() => readJsonLines(path, Line, { source: "user" })).toThrow(`${path}:2: not JSON (`);
    const torn: TornLine[] = [];
    expect(JsonLinesFile.open(path, Line, { onTornLine: (line) => torn.push(line) }).records.map((r) => r.n)).toEqual([1]);
    expect(torn).toEqual([{ file: path, line: 2, text: tornText }]);
    await runWriter("jsonl", path, "none");
    expect(readFileSync(path, "utf8")).toBe(linesOf([1, 2, 3, 4]));
  });
});

function fillWith(step: number): (dir: string) => Promise<void> {
  return (dir) => {
    for (const file of checkpointFiles(step)) writeFileAtomically(join(dir, file.name), file.data);
    return Promise.resolve();
  };
}

/** The step of a whole checkpoint; throws on one whose files disagree or are cut short. */
function readCheckpoint(dir: string): number {
  const { step } = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { step: number };
  const model = readFileSync(join(dir, "model.bin"));
  if (model.length !== 1 << 18 || model.some((byte) => byte !== step)) throw new Error(`${dir}: model.bin is not that of step ${step}`);
  return step;
}

function linesOf(ns: number[]): string {
  return ns.map((n) => `${JSON.stringify({ n, text: lineOf(n) })}\n`).join("");
}
