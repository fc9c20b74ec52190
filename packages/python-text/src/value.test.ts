import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pyDumps } from "./dumps.js";
import { exceptionText } from "./errors.js";
import { jsonLoads } from "./json-loads.js";
import { count, iterate, max, sorted, sub } from "./ops.js";
import { pyEquals, pyRepr, type PyValue } from "./value.js";

describe("json.dumps as Python writes it", () => {
  it("prints floats as repr() does, and non-finite floats as Python spells them", () => {
    expect(pyDumps([1, 1e16, 1e-5, 342.81, -0])).toBe("[1.0, 1e+16, 1e-05, 342.81, -0.0]");
    expect(pyDumps([NaN, Infinity, -Infinity])).toBe("[NaN, Infinity, -Infinity]");
  });

  it("keeps ints and floats apart and separates with ', ' and ': '", () => {
    expect(
      pyDumps(
        new Map<string, PyValue>([
          ["b", 1n],
          ["a", 1],
          ["c", [true, null, "x"]],
        ]),
      ),
    ).toBe('{"b": 1, "a": 1.0, "c": [true, null, "x"]}');
    expect(pyDumps(123456789012345678901234567890n)).toBe("123456789012345678901234567890");
  });

  it("escapes everything outside printable ASCII, as ensure_ascii does", () => {
    expect(pyDumps('é"\\\n\t\u2028\x7f\x00😀')).toBe('"\\u00e9\\"\\\\\\n\\t\\u2028\\u007f\\u0000\\ud83d\\ude00"');
  });

  it("sorts keys by code point with sort_keys", () => {
    const dict = new Map<string, PyValue>([
      ["b", 1n],
      ["B", 2n],
      ["😀", 3n],
      ["\uffff", 4n],
      [
        "a1",
        new Map([
          ["z", 1n],
          ["y", 2n],
        ]),
      ],
    ]);
    expect(pyDumps(dict, { sortKeys: true })).toBe('{"B": 2, "a1": {"y": 2, "z": 1}, "b": 1, "\\uffff": 4, "\\ud83d\\ude00": 3}');
  });

  it("writes non-ASCII as it is with ensure_ascii=False", () => {
    // Python: json.dumps({"名": ["é", 1.0, "a\nb"]}, sort_keys=True, ensure_ascii=False)
    const dict = new Map<string, PyValue>([["名", ["é", 1, "a\nb"]]]);
    expect(pyDumps(dict, { sortKeys: true, ensureAscii: false })).toBe('{"名": ["é", 1.0, "a\\nb"]}');
  });
});

describe("json.loads as Python reads it, into these values", () => {
  it("reads 2 as an int and 2.0 and 2e0 as floats, and writes them back so", () => {
    expect(pyDumps(jsonLoads("[2, 2.0, 2e0, -0, 1E+2]"))).toBe("[2, 2.0, 2.0, 0, 100.0]");
  });

  it("keeps the first position and the last value of a repeated key", () => {
    expect(pyDumps(jsonLoads('{"a": 1, "b": 2, "a": 3}'))).toBe('{"a": 3, "b": 2}');
  });

  it("round-trips whatever it writes", () => {
    const value: fc.Arbitrary<PyValue> = fc.letrec<{ value: PyValue }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.constant(null),
        fc.boolean(),
        fc.string({ unit: "binary" }),
        fc.bigInt(),
        fc.double(),
        fc.array(tie("value")),
        fc.array(fc.tuple(fc.string(), tie("value"))).map((entries) => new Map(entries)),
      ),
    })).value;
    fc.assert(
      fc.property(value, (v) => {
        const text = pyDumps(v);
        return pyDumps(jsonLoads(text)) === text;
      }),
    );
  });
});

describe("Python semantics benchmark tools rely on", () => {
  it("compares, counts, iterates and orders as Python does", () => {
    expect(pyEquals(1n, 1)).toBe(true);
    expect(pyEquals(true, 1n)).toBe(true);
    expect(pyEquals("1", 1n)).toBe(false);
    expect(
      pyEquals(
        new Map<string, PyValue>([
          ["a", 1n],
          ["b", [2]],
        ]),
        { b: [2n], a: 1 },
      ),
    ).toBe(true);
    expect(count(["a", "a", "b"], "a")).toBe(2);
    expect(iterate("ab")).toEqual(["a", "b"]);
    expect(sorted(["b", "a", "B"])).toEqual(["B", "a", "b"]);
    expect(max(0n, 0)).toBe(0n);
    expect(exceptionText(() => iterate(5n))).toBe("TypeError: 'int' object is not iterable");
    expect(exceptionText(() => sub("a", 1n))).toBe("TypeError: unsupported operand type(s) for -: 'str' and 'int'");
    expect(exceptionText(() => max(0n, "a"))).toBe("TypeError: '>' not supported between instances of 'str' and 'int'");
    expect(exceptionText(() => count(5n, 1n))).toBe("AttributeError: 'int' object has no attribute 'count'");
    expect(pyRepr(new Map<string, PyValue>([["it's", [1n, 2.5, null, true]]]))).toBe(`{"it's": [1, 2.5, None, True]}`);
  });
});
