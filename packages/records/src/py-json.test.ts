import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError, RecordError } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { parseJsonLines } from "./json-lines.js";
import { parsePyJsonLine, parsePyJsonText, readPyJsonFile } from "./py-json.js";
import { readText } from "./read-text.js";
import { z } from "zod";

describe("Python's JSON, read from files", () => {
  it("reads as json.loads does: ints as bigints, floats as numbers, dicts as Maps", () => {
    expect(parsePyJsonText('{"a": [1, 2.0, NaN], "a": 3}', "t.json")).toEqual(new Map([["a", 3n]]));
    expect(parsePyJsonText("[1, 2.5]", "t.json")).toEqual([1n, 2.5]);
  });

  it("names the file and the line of a syntax error, with Python's reason and column", () => {
    // json.loads('[1,\n 2,]'): Expecting value: line 2 column 4 (char 7)
    const error = (() => {
      try {
        parsePyJsonText("[1,\n 2,]", "tasks.json");
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(RecordError);
    expect((error as Error).message).toBe("tasks.json:2: not JSON (Expecting value, column 4)");
    // A line of a bigger file: its line there, not within the text.
    expect(() => parsePyJsonText('{"a" 1}', "runs.jsonl", 7)).toThrow("runs.jsonl:7: not JSON (Expecting ':' delimiter, column 6)");
  });

  it("reads JSON Lines lines the same way, the reader naming file and line", () => {
    expect(parsePyJsonLine("[1, Infinity]")).toEqual([1n, Infinity]);
    expect(() => parseJsonLines(z.unknown(), "[1]\n[2,,]\n", "saved.jsonl", { source: "user", parse: parsePyJsonLine })).toThrow(
      "saved.jsonl:2: not JSON (Expecting value, column 4)",
    );
  });

  it("reads a file, and a missing file is one InputError naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "py-json-"));
    writeFileSync(join(dir, "db.json"), '{"users": {"u1": 12345678901234567890}}');
    expect(await readPyJsonFile(join(dir, "db.json"))).toEqual(new Map([["users", new Map([["u1", 12345678901234567890n]])]]));
    const missing = join(dir, "nope.json");
    await expect(readText(missing)).rejects.toThrow(new InputError(`${missing}: no such file`));
    await expect(readPyJsonFile(missing)).rejects.toBeInstanceOf(InputError);
  });
});
