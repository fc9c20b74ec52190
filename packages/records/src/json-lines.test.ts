import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError } from "@envace/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { JsonLinesFile, parseJsonLines, readJsonLines, writeFileAtomically, type TornLine } from "./json-lines.js";

const dir = mkdtempSync(join(tmpdir(), "envace-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const Row = z.object({ n: z.number(), tags: z.array(z.string()).optional() });

function collect(): { torn: TornLine[]; onTornLine: (torn: TornLine) => void } {
  const torn: TornLine[] = [];
  return { torn, onTornLine: (line) => torn.push(line) };
}

describe("parseJsonLines", () => {
  it("reads one record per line, skipping blank lines", () => {
    expect(parseJsonLines(Row, '{"n":1}\n\n{"n":2,"tags":["a"]}\n', "rows.jsonl")).toEqual([{ n: 1 }, { n: 2, tags: ["a"] }]);
  });

  it("drops a torn last line and reports it, with or without trailing blank lines", () => {
    for (const text of ['{"n":1}\n{"n":2}\n{"n":', '{"n":1}\n{"n":2}\n{"n":\n\n']) {
      const { torn, onTornLine } = collect();
      expect(parseJsonLines(Row, text, "rows.jsonl", { onTornLine })).toEqual([{ n: 1 }, { n: 2 }]);
      expect(torn).toEqual([{ file: "rows.jsonl", line: 3, text: '{"n":' }]);
    }
  });

  it("reads lines with the parser given, and still drops a torn last line", () => {
    const Loose = z.object({ n: z.number().nullable() });
    const parse = (line: string): unknown => JSON.parse(line.replaceAll("NaN", "null"));
    const { torn, onTornLine } = collect();
    expect(parseJsonLines(Loose, '{"n": NaN}\n{"n": 2}\n{"n"', "py.jsonl", { parse, onTornLine })).toEqual([{ n: null }, { n: 2 }]);
    expect(torn.map((t) => t.line)).toEqual([3]);
  });

  it("keeps a whole last record that lacks only its newline", () => {
    const { torn, onTornLine } = collect();
    expect(parseJsonLines(Row, '{"n":1}\n{"n":2}', "rows.jsonl", { onTornLine })).toEqual([{ n: 1 }, { n: 2 }]);
    expect(torn).toEqual([]);
  });

  it("names the file and line of a line that is not JSON before the last", () => {
    expect(() => parseJsonLines(Row, '{"n":1}\n{"n":\n{"n":3}\n', "rows.jsonl")).toThrow(/^rows\.jsonl:2: not JSON \(/);
  });

  it("names the file, line and field of a record that fails the schema, last line included", () => {
    const error = (() => {
      try {
        parseJsonLines(Row, '{"n":1}\n{"n":2,"tags":["a",7]}\n', "rows.jsonl");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RecordError);
    expect((error as RecordError).source).toEqual({ file: "rows.jsonl", line: 2 });
    expect((error as RecordError).fields.map((f) => f.path)).toEqual(["tags[1]"]);
    expect((error as Error).message).toMatch(/^rows\.jsonl:2: tags\[1\]: /);
  });
});

describe("readJsonLines", () => {
  it("reads a missing file as empty", () => {
    expect(readJsonLines(join(dir, "missing.jsonl"), Row)).toEqual([]);
  });

  it("leaves a torn file as it is", () => {
    const path = join(dir, "read-torn.jsonl");
    writeFileSync(path, '{"n":1}\n{"n');
    const { torn, onTornLine } = collect();
    expect(readJsonLines(path, Row, { onTornLine })).toEqual([{ n: 1 }]);
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
    expect(existsSync(`${path}.tmp`)).toBe(false);
  });
});

describe("writeFileAtomically", () => {
  it("replaces the file, creating its folder", () => {
    const path = join(dir, "c", "summary.json");
    writeFileAtomically(path, "old\n");
    writeFileAtomically(path, "new\n");
    expect(readFileSync(path, "utf8")).toBe("new\n");
    expect(existsSync(`${path}.tmp`)).toBe(false);
  });
});
