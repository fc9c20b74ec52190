import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, contentHash, sha256Hex } from "./canonical.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: null, e: "x" }], c: true } })).toBe('{"a":{"c":true,"d":[3,{"e":"x","f":null}]},"b":1}');
  });

  it("drops undefined members and writes undefined array slots as null, as JSON.stringify does", () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it("rejects what JSON cannot carry, naming where", () => {
    expect(() => canonicalJson({ a: [1, Number.NaN] })).toThrow("$.a[1] is NaN");
    expect(() => canonicalJson({ f: () => 1 })).toThrow("$.f is a function");
  });

  it("parses back to the same value, whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});

describe("hashes", () => {
  it("gives the SHA-256 of the text", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("addresses equal values equally", () => {
    expect(contentHash({ x: 1, y: [2] })).toBe(contentHash({ y: [2], x: 1 }));
    expect(contentHash({ x: 1 })).not.toBe(contentHash({ x: "1" }));
  });
});
