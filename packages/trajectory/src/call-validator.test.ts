import type { ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { MAX_SCHEMA_DEPTH, pathBeyondDepth, SchemaCache, SchemaDepthError, ToolCallValidator } from "./call-validator.js";

/** `{"type":"array","items":…}` around a string schema: `levels` objects nested in each other. */
function nestedItems(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 1; i < levels; i += 1) schema = { type: "array", items: schema };
  return schema;
}

/** An array holding `value` inside `levels` arrays. */
function nestedArrays(levels: number, value: unknown): unknown {
  let out = value;
  for (let i = 0; i < levels; i += 1) out = [out];
  return out;
}

describe("pathBeyondDepth", () => {
  it("counts each object and array as one level and names the first path beyond the limit", () => {
    expect(pathBeyondDepth("text", 0)).toBeUndefined();
    expect(pathBeyondDepth({}, 1)).toBeUndefined();
    expect(pathBeyondDepth({}, 0)).toEqual([]);
    expect(pathBeyondDepth({ a: [1, { b: 2 }] }, 3)).toBeUndefined();
    expect(pathBeyondDepth({ a: [1, { b: 2 }] }, 2)).toEqual(["a", 1]);
    expect(pathBeyondDepth({ x: 1, a: { b: {} }, c: { d: {} } }, 2)).toEqual(["a", "b"]);
  });

  it("walks 10^5 levels without overflowing the stack", () => {
    expect(pathBeyondDepth(nestedArrays(100_000, 1), 100_000)).toBeUndefined();
    expect(pathBeyondDepth(nestedArrays(100_000, 1), 3)).toEqual([0, 0, 0]);
  });
});

describe("ToolCallValidator: nesting limits", () => {
  const tool = (parameters: Record<string, unknown>): ToolSpec => ({
    type: "function",
    function: { name: "deep", parameters: parameters as NonNullable<ToolSpec["function"]["parameters"]> },
  });

  it("compiles a schema nested exactly to the limit, and validates with it", () => {
    const validator = new ToolCallValidator([tool({ type: "object", properties: { v: nestedItems(MAX_SCHEMA_DEPTH - 2) } })]);
    // The schema's levels: the root object, `properties`, then MAX_SCHEMA_DEPTH - 2 nested item schemas.
    expect(pathBeyondDepth({ type: "object", properties: { v: nestedItems(MAX_SCHEMA_DEPTH - 2) } }, MAX_SCHEMA_DEPTH)).toBeUndefined();
    // The data: MAX_SCHEMA_DEPTH - 3 arrays around a string, inside the arguments object.
    expect(validator.check({ id: "c", name: "deep", arguments: { v: nestedArrays(MAX_SCHEMA_DEPTH - 3, "s") } }).ok).toBe(true);
    expect(validator.check({ id: "c", name: "deep", arguments: { v: nestedArrays(MAX_SCHEMA_DEPTH - 3, 1) } })).toMatchObject({
      ok: false,
      error: { code: "INVALID_PARAMETERS" },
    });
  });

  it("refuses a schema one level deeper, and one 10^5 deep, with a typed error naming the limit", () => {
    for (const levels of [MAX_SCHEMA_DEPTH + 1, 100_000]) {
      const build = () => new ToolCallValidator([tool(nestedItems(levels))]);
      expect(build).toThrow(SchemaDepthError);
      expect(build).toThrow(`tool "deep" parameters: the JSON Schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    }
  });

  it("refuses arguments nested deeper than the limit as a malformed call, not a crash", () => {
    const validator = new ToolCallValidator([{ type: "function", function: { name: "any" } }]);
    expect(validator.check({ id: "c", name: "any", arguments: { v: nestedArrays(100_000, 1) } })).toMatchObject({
      ok: false,
      error: { code: "INVALID_TOOL_CALL_FORMAT", message: `The tool call is malformed: arguments nest deeper than ${MAX_SCHEMA_DEPTH} levels.` },
    });
  });
});

describe("SchemaCache", () => {
  const schemaOf = (i: number) => ({ type: "object", properties: { [`field${i}`]: { type: "integer", minimum: i } } });

  it("shares one validator per schema text, whatever object carries it", () => {
    const cache = new SchemaCache(8);
    const first = cache.compile(schemaOf(1));
    expect(cache.compile({ $schema: "http://json-schema.org/draft-07/schema#", ...schemaOf(1) })).toBe(first);
    // Ajv's cache also holds the draft-07 meta-schema it checks schemas against.
    expect(cache.stats).toEqual({ validators: 1, ajvSchemas: 2 });
  });

  it("keeps Ajv's own cache bounded: 200 distinct schemas through a cache of 16 leave at most 16 (and the meta-schema) in the compiler", () => {
    const cache = new SchemaCache(16);
    const early = cache.compile(schemaOf(0));
    let most = 0;
    for (let i = 0; i < 200; i += 1) {
      cache.compile(schemaOf(i));
      most = Math.max(most, cache.stats.ajvSchemas);
      expect(cache.stats.validators).toBeLessThanOrEqual(16);
    }
    // One Ajv for all 200 would hold 201 (the old behaviour).
    expect(most).toBe(17);
    // 200 compiles of distinct schemas, 16 to a generation: the last generation holds 200 - 12 * 16 = 8.
    expect(cache.stats).toEqual({ validators: 8, ajvSchemas: 9 });
    // A validator from a generation long gone still works.
    expect([early({ field0: 3 }), early({ field0: -1 })]).toEqual([true, false]);
  });

  it("counts a schema that fails to compile against the generation too", () => {
    const cache = new SchemaCache(4);
    for (let i = 0; i < 10; i += 1) expect(() => cache.compile({ type: `no-such-type-${i}` })).toThrow();
    expect(cache.stats.ajvSchemas).toBeLessThanOrEqual(5);
  });
});
