import { describe, expect, it } from "vitest";
import { DepthLimitError } from "./errors.js";
import { hashDictModel, JSON_DEPTH_LIMIT, jsonLoads } from "./json-loads.js";
import { pyDeepCopy, pyRepr, toJson, type PyModel } from "./value.js";

// Keys and shapes that data, not this code, chooses.
describe("keys that name Object.prototype's members", () => {
  const text = '{"__proto__":1,"constructor":2}';

  it("survive jsonLoads → toJson → JSON text byte for byte, and reads see only them", () => {
    const loaded = jsonLoads(text);
    expect([...(loaded as Map<string, unknown>).keys()]).toEqual(["__proto__", "constructor"]);
    const json = toJson(loaded) as Record<string, unknown>;
    expect(JSON.stringify(json)).toBe(text);
    expect(Object.keys(json)).toEqual(["__proto__", "constructor"]);
    expect(json.constructor).toBe(2);
    // Nothing of Object.prototype shows through.
    expect(json.toString).toBeUndefined();
    expect(json.hasOwnProperty).toBeUndefined();
    // The same through the slow parser (an integral float sends the text there) and hashed dicts.
    expect(JSON.stringify(toJson(jsonLoads('{"__proto__":1.0,"constructor":2}')))).toBe('{"__proto__":1,"constructor":2}');
    expect(JSON.stringify(toJson(jsonLoads(text, hashDictModel)))).toBe(text);
  });

  it("survive a deep copy of a model, which keeps them as fields", () => {
    const model = JSON.parse('{"__proto__":"p","constructor":"c","inner":{"__proto__":["x"]}}') as PyModel;
    const copy = pyDeepCopy(model);
    expect(JSON.stringify(copy)).toBe('{"__proto__":"p","constructor":"c","inner":{"__proto__":["x"]}}');
    expect(Object.keys(copy)).toEqual(["__proto__", "constructor", "inner"]);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(pyRepr(copy)).toBe("{'__proto__': 'p', 'constructor': 'c', 'inner': {'__proto__': ['x']}}");
    // A copy, not the same objects.
    expect((copy.inner as PyModel).__proto__).not.toBe((model.inner as PyModel).__proto__);
  });
});

describe("nesting depth", () => {
  const deep = 100_000;

  it("reads up to JSON_DEPTH_LIMIT levels", () => {
    const limit = JSON_DEPTH_LIMIT;
    expect(limit).toBe(1000);
    let value = jsonLoads("[".repeat(limit) + "]".repeat(limit));
    for (let level = 1; level < limit; level++) value = (value as unknown[])[0] as typeof value;
    expect(value).toEqual([]);
  });

  it("refuses 10^5 levels with a DepthLimitError naming the limit, on either parsing path", () => {
    const cases = [
      "[".repeat(deep) + "]".repeat(deep), // valid JSON: the native path
      '{"a":'.repeat(deep) + "1.0" + "}".repeat(deep), // an integral float: the slow path
      "[".repeat(deep), // never closed: the slow path
    ];
    for (const text of cases) {
      let caught: unknown;
      try {
        jsonLoads(text);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(DepthLimitError);
      expect((caught as DepthLimitError).limit).toBe(1000);
      expect((caught as DepthLimitError).message).toBe("RecursionError: the JSON text nests deeper than 1000 levels");
    }
  });
});
