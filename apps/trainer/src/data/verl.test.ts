import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cm2Record } from "@envace/protocol";
import { parseCm2Records } from "@envace/rewards";
import { parquetWriteBuffer, type SchemaElement } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCm2Split } from "./cm2.js";
import { DataError, RowError } from "./errors.js";
import { loadVerlSplit, readVerlRecords, verlField } from "./verl.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

// ---------------------------------------------------------------------------------------------
// Parquet written as pyarrow (and so Hugging Face `datasets.to_parquet`, which verl data is made
// with) writes it: lists of structs with the union of their fields (null where a struct lacks
// one), Python ints as INT64, floats as DOUBLE, strings as UTF8, 3-level LIST groups.

type Shape = { kind: "null" | "string" | "int" | "double" | "bool" } | { kind: "list"; element: Shape } | { kind: "struct"; fields: Map<string, Shape> };

function shapeOf(value: unknown): Shape {
  if (value === null || value === undefined) return { kind: "null" };
  if (typeof value === "string") return { kind: "string" };
  if (typeof value === "boolean") return { kind: "bool" };
  if (typeof value === "number") return { kind: Number.isInteger(value) ? "int" : "double" };
  if (Array.isArray(value)) return { kind: "list", element: value.map(shapeOf).reduce(merge, { kind: "null" }) };
  return { kind: "struct", fields: new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, shapeOf(v)])) };
}

function merge(a: Shape, b: Shape): Shape {
  if (a.kind === "null") return b;
  if (b.kind === "null") return a;
  if (a.kind === "list" && b.kind === "list") return { kind: "list", element: merge(a.element, b.element) };
  if (a.kind === "struct" && b.kind === "struct") {
    const fields = new Map(a.fields);
    for (const [key, shape] of b.fields) fields.set(key, merge(fields.get(key) ?? { kind: "null" }, shape));
    return { kind: "struct", fields };
  }
  if ((a.kind === "int" && b.kind === "double") || (a.kind === "double" && b.kind === "int")) return { kind: "double" };
  if (a.kind !== b.kind) throw new Error(`mixed types ${a.kind} and ${b.kind}`);
  return a;
}

function schemaOf(name: string, shape: Shape): SchemaElement[] {
  const optional = { name, repetition_type: "OPTIONAL" as const };
  switch (shape.kind) {
    case "null":
    case "string":
      return [{ ...optional, type: "BYTE_ARRAY", converted_type: "UTF8" }];
    case "int":
      return [{ ...optional, type: "INT64" }];
    case "double":
      return [{ ...optional, type: "DOUBLE" }];
    case "bool":
      return [{ ...optional, type: "BOOLEAN" }];
    case "list":
      return [
        { ...optional, converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        ...schemaOf("element", shape.element),
      ];
    case "struct":
      return [{ ...optional, num_children: shape.fields.size }, ...[...shape.fields].flatMap(([key, field]) => schemaOf(key, field))];
  }
}

/** A value laid out for the writer: every struct field present (null when missing), INT64 as bigint. */
function encode(value: unknown, shape: Shape): unknown {
  if (value === null || value === undefined) return null;
  switch (shape.kind) {
    case "int":
      return BigInt(value as number);
    case "list":
      return (value as unknown[]).map((item) => encode(item, shape.element));
    case "struct":
      return Object.fromEntries([...shape.fields].map(([key, field]) => [key, encode((value as Record<string, unknown>)[key], field)]));
    default:
      return value;
  }
}

async function writeParquet(path: string, rows: readonly Record<string, unknown>[], types: Record<string, "JSON"> = {}): Promise<string> {
  const names = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const shapes = new Map(names.map((name) => [name, rows.map((row) => shapeOf(row[name])).reduce(merge, { kind: "null" })]));
  const schema: SchemaElement[] = [{ name: "schema", num_children: names.length }];
  for (const name of names) {
    schema.push(
      ...(types[name] === "JSON"
        ? [{ name, type: "BYTE_ARRAY" as const, converted_type: "JSON" as const, repetition_type: "OPTIONAL" as const }]
        : schemaOf(name, shapes.get(name)!)),
    );
  }
  const columnData = names.map((name) => ({
    name,
    // The writer serialises JSON columns itself.
    data: rows.map((row) => (types[name] === "JSON" ? (row[name] ?? null) : encode(row[name], shapes.get(name)!))),
  }));
  await writeFile(path, new Uint8Array(parquetWriteBuffer({ columnData, schema })));
  return path;
}

/** A CM2 record as one row of verl's checklist Parquet. */
function verlRow(record: Cm2Record, index: number): Record<string, unknown> {
  const firstUser = record.messages.findIndex((m) => m.role === "user");
  return {
    data_source: "cm2-fixture",
    prompt: record.messages.slice(0, firstUser + 1),
    ability: "tool_use",
    extra_info: {
      index,
      uuid: record.uuid,
      messages: record.messages,
      tools: JSON.stringify(record.tools),
      interaction_kwargs: { name: "checklist", checklist_list: record.checklists },
    },
  };
}

// ---------------------------------------------------------------------------------------------

let dir: string;
let records: Cm2Record[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "envace-verl-"));
  records = parseCm2Records(await readFile(join(FIXTURES, "cm2-train.jsonl"), "utf8"), "cm2-train.jsonl");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Row = Record<string, unknown> & { extra_info: Record<string, unknown> };
const rowsOf = (): Row[] => records.map((record, i) => verlRow(record, i) as Row);

describe("verl Parquet rows", () => {
  it("become the same tasks and gold examples as the CM2 records they were made from", async () => {
    const path = await writeParquet(join(dir, "train.parquet"), rowsOf());
    const fromParquet = await loadVerlSplit(path);
    const fromJsonl = await loadCm2Split(join(FIXTURES, "cm2-train.jsonl"));
    const withoutMetadata = (split: typeof fromJsonl) => split.tasks.map(({ metadata: _, ...task }) => task);
    expect(withoutMetadata(fromParquet)).toEqual(withoutMetadata(fromJsonl));
    expect(fromParquet.gold).toEqual(fromJsonl.gold);
    expect(fromParquet.tasks.map((t) => t.metadata)).toEqual([
      { format: "cm2", file: path, row: 0, data_source: "cm2-fixture" },
      { format: "cm2", file: path, row: 1, data_source: "cm2-fixture" },
    ]);
  });

  it("undo Arrow's struct filling: no null fields on messages, the assistant's null content kept", async () => {
    const path = await writeParquet(join(dir, "filled.parquet"), rowsOf());
    const [weather] = await readVerlRecords(path);
    expect(weather!.record.messages[1]).toEqual({ role: "user", content: "Will it rain in Paris today?" });
    expect(weather!.record.messages[6]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_w2", type: "function", function: { name: "get_forecast", arguments: '{"city": "Atlantis"}' } }],
    });
    expect(weather!.record.checklists[0]![0]![0]!.evidence).toEqual([
      { turn: 0, step: 0, from: "assistant.tool_calls", snippet: 'get_forecast {"city": "Paris"}' },
    ]);
  });

  it("accept tools as a list of structs, extra_info as a JSON column, and take the uuid from original_index when there is no other", async () => {
    const rows = rowsOf().map((row, i) => {
      const { uuid: _, ...extra } = row.extra_info;
      return { ...row, extra_info: { ...extra, original_index: 100 + i, tools: records[i]!.tools } };
    });
    const structs = await readVerlRecords(await writeParquet(join(dir, "struct-tools.parquet"), rows));
    expect(structs.map((r) => r.record.uuid)).toEqual(["100", "101"]);
    expect(structs.map((r) => r.record.tools)).toEqual(records.map((r) => r.tools));
    const json = await readVerlRecords(await writeParquet(join(dir, "json.parquet"), rowsOf(), { extra_info: "JSON" }));
    expect(json.map((r) => r.record)).toEqual(records);
  });

  it("report every bad row at once, each by file, row and field, and load nothing", async () => {
    const rows = rowsOf();
    rows.push(...rowsOf().map((row, i) => ({ ...row, extra_info: { ...row.extra_info, uuid: `copy-${i}` } })));
    rows[1]!.extra_info.tools = '[{"type": "function", "function": {"name": "get_user"';
    const checklist = rows[2]!.extra_info.interaction_kwargs as { name: string; checklist_list: { weight: number }[][][] };
    rows[2]!.extra_info.interaction_kwargs = {
      name: "judge",
      checklist_list: [[[{ ...checklist.checklist_list[0]![0]![0]!, weight: 0.2 }, checklist.checklist_list[0]![0]![1]!], checklist.checklist_list[0]![1]!]],
    };
    const messages = structuredClone(rows[3]!.extra_info.messages) as { tool_calls?: { function: { arguments: string } }[] }[];
    messages[2]!.tool_calls![0]!.function.arguments = "ada";
    rows[3]!.extra_info.messages = messages;
    const path = await writeParquet(join(dir, "bad.parquet"), rows);

    const error = (await loadVerlSplit(path).catch((e: unknown) => e)) as DataError;
    expect(error).toBeInstanceOf(DataError);
    expect(error.errors.every((e) => e instanceof RowError)).toBe(true);
    expect(error.errors.map((e) => e.message)).toEqual([
      `${path} row 1 (record shop-002): extra_info.tools: not JSON (${jsonErrorOf('[{"type": "function", "function": {"name": "get_user"')})`,
      `${path} row 2 (record copy-0): extra_info.interaction_kwargs.name: expected "checklist", got "judge"; ` +
        "extra_info.interaction_kwargs.checklist_list[0][0]: weights sum to 0.7, expected 1",
      `${path} row 3 (record copy-1): extra_info.messages[2].tool_calls[0].function.arguments: not JSON (${jsonErrorOf("ada")})`,
    ]);
    await expect(readVerlRecords(path)).rejects.toThrow(/^2 bad records:\n/);
  });

  it("name a missing field, a duplicate uuid and a prompt that is not the dialogue's start", async () => {
    const rows = rowsOf();
    rows.push({ ...rowsOf()[0]!, prompt: [{ role: "user", content: "Will it rain in Paris today?" }] });
    delete rows[1]!.extra_info.interaction_kwargs;
    const path = await writeParquet(join(dir, "fields.parquet"), rows);
    const error = (await loadVerlSplit(path).catch((e: unknown) => e)) as DataError;
    expect(error.errors.map((e) => e.message)).toEqual([
      `${path} row 1 (record shop-002): extra_info.interaction_kwargs: missing`,
      `${path} row 2 (record weather-001): prompt: is not extra_info.messages up to the first user message (1 messages, expected the first 2)`,
    ]);
    // With a matching prompt, the copy is a duplicate of row 0.
    rows[2] = rowsOf()[0]!;
    rows[1] = rowsOf()[1]!;
    const duplicate = await writeParquet(join(dir, "duplicate.parquet"), rows);
    await expect(loadVerlSplit(duplicate)).rejects.toThrow(`${duplicate} row 2 (record weather-001): uuid: duplicate uuid "weather-001" (also at row 0)`);
  });

  it("read extra_info stored as JSON text, naming the row whose text is not JSON", async () => {
    const rows = rowsOf().map((row) => ({ ...row, extra_info: JSON.stringify(row.extra_info) }));
    rows[1]!.extra_info = rows[1]!.extra_info.slice(0, 30);
    const path = await writeParquet(join(dir, "text.parquet"), rows);
    await expect(readVerlRecords(path)).rejects.toThrow(`${path} row 1: extra_info: not JSON (${jsonErrorOf(rows[1]!.extra_info)})`);
    rows[1] = { ...rowsOf()[1]!, extra_info: JSON.stringify(rowsOf()[1]!.extra_info) };
    expect((await readVerlRecords(await writeParquet(join(dir, "text-ok.parquet"), rows))).map((r) => r.record)).toEqual(records);
  });

  it("keep a `__proto__` key of the file as a key: a message's role under it is no role", async () => {
    // JSON text, as a file holds it: `__proto__` is an own key there, whose object must not become the message's prototype.
    const rows = rowsOf().map((row) => ({ ...row, extra_info: JSON.stringify(row.extra_info) }));
    rows[0]!.extra_info = rows[0]!.extra_info.replace('{"role":"user",', '{"__proto__":{"role":"user"},"constructor":"c",');
    const path = await writeParquet(join(dir, "proto.parquet"), rows);
    const error = (await loadVerlSplit(path).catch((e: unknown) => e)) as DataError;
    expect(error).toBeInstanceOf(DataError);
    // The role is missing, and the first user message is a later one, so the prompt no longer matches.
    expect(error.errors.map((e) => e.message)).toEqual([
      `${path} row 0 (record weather-001): extra_info.messages[1].role: Invalid discriminator value. Expected 'system' | 'user' | 'assistant' | 'tool'; ` +
        "prompt: is not extra_info.messages up to the first user message (2 messages, expected the first 6)",
    ]);
  });

  it("refuse a file without extra_info, a file that is not Parquet, and a missing file", async () => {
    const noExtra = await writeParquet(join(dir, "no-extra.parquet"), [{ prompt: "hello", data_source: "x" }]);
    await expect(loadVerlSplit(noExtra)).rejects.toThrow(`${noExtra}: extra_info: no such column; the file has prompt, data_source`);
    const text = join(dir, "records.parquet");
    await writeFile(text, await readFile(join(FIXTURES, "cm2-train.jsonl")));
    await expect(loadVerlSplit(text)).rejects.toThrow(new RegExp(`^${text}: not a Parquet file \\(`));
    await expect(loadVerlSplit(join(dir, "absent.parquet"))).rejects.toThrow(`${join(dir, "absent.parquet")}: cannot read verl Parquet (ENOENT)`);
  });
});

describe("verl field names", () => {
  it("map CM2 record paths to where verl keeps them", () => {
    expect(verlField("messages[2].content")).toBe("extra_info.messages[2].content");
    expect(verlField("tools[0].function.name")).toBe("extra_info.tools[0].function.name");
    expect(verlField("checklists[0][1]")).toBe("extra_info.interaction_kwargs.checklist_list[0][1]");
    expect(verlField("uuid")).toBe("uuid");
  });
});

function jsonErrorOf(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("valid JSON");
}
