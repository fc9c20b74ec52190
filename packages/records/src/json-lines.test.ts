import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError, RecordError } from "@envace/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writeFileAtomically } from "./atomic.js";
import { JsonLinesFile, parseJsonLines, readJsonLines, type TornLine } from "./json-lines.js";

const dir = mkdtempSync(join(tmpdir(), "envace-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const Row = z.object({ n: z.number(), tags: z.array(z.string()).optional() });

function collect(): { torn: TornLine[]; onTornLine: (torn: TornLine) => void } {
  const torn: TornLine[] = [];
  return { torn, onTornLine: (line) => torn.push(line) };
}

const own = { source: "own" } as const;
const user = { source: "user" } as const;

describe("parseJsonLines", () => {
  it("reads one record per line, skipping blank lines", () => {
    for (const options of [own, user])
      expect(parseJsonLines(Row, '{"n":1}\n\n{"n":2,"tags":["a"]}\n', "rows.jsonl", options)).toEqual([{ n: 1 }, { n: 2, tags: ["a"] }]);
  });

  it("drops a torn last line of the project's own file, one without a final newline, and reports it", () => {
    const { torn, onTornLine } = collect();
    expect(parseJsonLines(Row, '{"n":1}\n{"n":2}\n{"n":', "rows.jsonl", { source: "own", onTornLine })).toEqual([{ n: 1 }, { n: 2 }]);
    expect(torn).toEqual([{ file: "rows.jsonl", line: 3, text: '{"n":' }]);
  });

  it("refuses a bad last line that ends in a newline, even in the project's own file: no append was cut there", () => {
    for (const text of ['{"n":1}\n{"n":2}\n{"n":\n', '{"n":1}\n{"n":2}\n{"n":\n\n']) {
      const { torn, onTornLine } = collect();
      expect(() => parseJsonLines(Row, text, "rows.jsonl", { source: "own", onTornLine })).toThrow(/^rows\.jsonl:3: not JSON \(/);
      expect(torn).toEqual([]);
    }
  });

  it("refuses every bad line of a file the user gives, a last one without its newline included", () => {
    for (const text of ['{"n":1}\n{"n":', '{"n":1}\n{"n":\n']) {
      expect(() => parseJsonLines(Row, text, "predictions.jsonl", user)).toThrow(/^predictions\.jsonl:2: not JSON \(/);
    }
  });

  it("reads lines with the parser given, and still drops a torn last line", () => {
    const Loose = z.object({ n: z.number().nullable() });
    const parse = (line: string): unknown => JSON.parse(line.replaceAll("NaN", "null"));
    const { torn, onTornLine } = collect();
    expect(parseJsonLines(Loose, '{"n": NaN}\n{"n": 2}\n{"n"', "py.jsonl", { source: "own", parse, onTornLine })).toEqual([{ n: null }, { n: 2 }]);
    expect(torn.map((t) => t.line)).toEqual([3]);
    expect(() => parseJsonLines(Loose, '{"n": NaN}\n{"n": 2}\n{"n"', "py.jsonl", { source: "user", parse })).toThrow(/^py\.jsonl:3: not JSON/);
  });

  it("keeps a whole last record that lacks only its newline", () => {
    const { torn, onTornLine } = collect();
    expect(parseJsonLines(Row, '{"n":1}\n{"n":2}', "rows.jsonl", { source: "own", onTornLine })).toEqual([{ n: 1 }, { n: 2 }]);
    expect(parseJsonLines(Row, '{"n":1}\n{"n":2}', "rows.jsonl", user)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(torn).toEqual([]);
  });

  it("names the file and line of a line that is not JSON before the last", () => {
    for (const options of [own, user])
      expect(() => parseJsonLines(Row, '{"n":1}\n{"n":\n{"n":3}\n', "rows.jsonl", options)).toThrow(/^rows\.jsonl:2: not JSON \(/);
  });

  it("names the file, line and field of a record that fails the schema, last line included", () => {
    for (const [options, text] of [
      [own, '{"n":1}\n{"n":2,"tags":["a",7]}'],
      [user, '{"n":1}\n{"n":2,"tags":["a",7]}\n'],
    ] as const) {
      const error = (() => {
        try {
          parseJsonLines(Row, text, "rows.jsonl", options);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(RecordError);
      expect((error as RecordError).source).toEqual({ file: "rows.jsonl", line: 2 });
      expect((error as RecordError).fields.map((f) => f.path)).toEqual(["tags[1]"]);
      expect((error as Error).message).toMatch(/^rows\.jsonl:2: tags\[1\]: /);
    }
  });
});

describe("readJsonLines", () => {
  it("reads a missing file of the project's as empty, and refuses a missing file of the user's, naming it", () => {
    expect(readJsonLines(join(dir, "missing.jsonl"), Row, own)).toEqual([]);
    expect(() => readJsonLines(join(dir, "missing.jsonl"), Row, user)).toThrow(InputError);
    expect(() => readJsonLines(join(dir, "missing.jsonl"), Row, user)).toThrow(`${join(dir, "missing.jsonl")}: cannot read (ENOENT)`);
  });

  it("leaves a torn file as it is", () => {
    const path = join(dir, "read-torn.jsonl");
    writeFileSync(path, '{"n":1}\n{"n');
    const { torn, onTornLine } = collect();
    expect(readJsonLines(path, Row, { source: "own", onTornLine })).toEqual([{ n: 1 }]);
    expect(torn).toHaveLength(1);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n');
  });
});

describe("JsonLinesFile", () => {
  it("creates missing folders on the first append and writes one line per record", () => {
    const path = join(dir, "a", "b", "rows.jsonl");
    const file = JsonLinesFile.open(path, Row);
    expect(file.records).toEqual([]);
    expect(existsSync(join(dir, "a"))).toBe(false);
    file.append({ n: 1 });
    file.append({ n: 2 });
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
    expect(JsonLinesFile.open(path, Row).records).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("cuts a torn last line off before appending, reporting it", () => {
    const path = join(dir, "torn.jsonl");
    writeFileSync(path, '{"n":1}\n{"n":2}\n{"n":3,"ta');
    const { torn, onTornLine } = collect();
    const file = JsonLinesFile.open(path, Row, { onTornLine });
    expect(file.records).toEqual([{ n: 1 }, { n: 2 }]);
    expect(torn).toEqual([{ file: path, line: 3, text: '{"n":3,"ta' }]);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
    file.append({ n: 3 });
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  it("cuts a torn line at its byte offset when earlier lines hold multi-byte characters", () => {
    const path = join(dir, "utf8.jsonl");
    writeFileSync(path, '{"n":1,"tags":["τ²"]}\n{"n":2,"tags":["é');
    JsonLinesFile.open(path, Row, { onTornLine: () => undefined }).append({ n: 2 });
    expect(readFileSync(path, "utf8")).toBe('{"n":1,"tags":["τ²"]}\n{"n":2}\n');
  });

  it("ends a whole last record that lacks its newline before appending", () => {
    const path = join(dir, "no-newline.jsonl");
    writeFileSync(path, '{"n":1}');
    JsonLinesFile.open(path, Row).append({ n: 2 });
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
  });

  it("refuses a file with a bad line before the last, and leaves it untouched", () => {
    const path = join(dir, "bad.jsonl");
    writeFileSync(path, '{"n":1}\n{"n":"two"}\n{"n');
    expect(() => JsonLinesFile.open(path, Row)).toThrow(/bad\.jsonl:2: n: /);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":"two"}\n{"n');
  });

  it("refuses a bad last line that ends in a newline, and leaves the file untouched", () => {
    const path = join(dir, "bad-last.jsonl");
    writeFileSync(path, '{"n":1}\n{"n\n');
    expect(() => JsonLinesFile.open(path, Row, { onTornLine: () => undefined })).toThrow(/bad-last\.jsonl:2: not JSON/);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n\n');
  });

  it("writes lines with the serializer given, and flushes each when durable", () => {
    const path = join(dir, "custom.jsonl");
    const file = JsonLinesFile.open(path, Row, { durable: true, serialize: (row) => `{"n": ${row.n}}` });
    file.append({ n: 7 });
    expect(readFileSync(path, "utf8")).toBe('{"n": 7}\n');
  });

  it("rewrites the whole file", () => {
    const path = join(dir, "rewrite.jsonl");
    const file = JsonLinesFile.open(path, Row);
    for (const n of [1, 2, 3]) file.append({ n });
    file.rewrite([{ n: 1 }]);
    file.append({ n: 4 });
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":4}\n');
    expect(readdirSync(dir).filter((name) => name.includes("rewrite"))).toEqual(["rewrite.jsonl"]);
  });
});

describe("writeFileAtomically", () => {
  it("replaces the file, creating its folder, and leaves no temporary file", () => {
    const folder = join(dir, "c");
    const path = join(folder, "summary.json");
    writeFileAtomically(path, "old\n");
    writeFileAtomically(path, new TextEncoder().encode("new\n"));
    expect(readFileSync(path, "utf8")).toBe("new\n");
    expect(readdirSync(folder)).toEqual(["summary.json"]);
  });

  it("leaves the old contents and no temporary file when the write fails", () => {
    const path = join(dir, "d", "summary.json");
    writeFileAtomically(path, "old\n");
    mkdirSync(join(dir, "d", "blocked"));
    // A folder in the way makes the rename fail after the temporary file was written.
    expect(() => writeFileAtomically(join(dir, "d", "blocked"), "x")).toThrow();
    expect(readFileSync(path, "utf8")).toBe("old\n");
    expect(readdirSync(join(dir, "d")).sort()).toEqual(["blocked", "summary.json"]);
  });
});
