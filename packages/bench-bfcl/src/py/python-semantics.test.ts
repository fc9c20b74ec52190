import { JsonDecodeError } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { contains, getItem, iterate, len } from "./containers.js";
import { decimalFromDouble, decimalFromInt, decimalRepr, decimalSqrt } from "./decimal.js";
import { formatDateTime, strptime } from "./datetime.js";
import { parsePyJson } from "./json.js";
import { div, dpsToPrec, exact, log, mpfRepr } from "./mpmath.js";
import * as ops from "./ops.js";
import { PythonRandom } from "./random.js";
import { jsonDumps, jsonDumpsIndented, NotSerializable, pyRepr } from "./repr.js";
import { splitlines, splitWhitespace } from "./strings.js";
import { float, hashKey, pyEquals, PyDict, PyError, PyOpaque, PySet, PyTuple, typeName } from "./value.js";

describe("values keep Python's types and equality", () => {
  it("int, float and bool are distinct types that compare equal", () => {
    expect([typeName(1), typeName(float(1)), typeName(true), typeName(null), typeName([]), typeName(new PyTuple([]))]).toEqual(["int", "float", "bool", "NoneType", "list", "tuple"]);
    expect(pyEquals(1, float(1))).toBe(true);
    expect(pyEquals(true, 1)).toBe(true);
    expect(pyEquals(true, float(1.0))).toBe(true);
    expect(pyEquals(false, 0)).toBe(true);
    expect(pyEquals("1", 1)).toBe(false);
    expect(pyEquals(float(NaN), float(NaN))).toBe(false);
  });

  it("lists and tuples never compare equal; containers compare element-wise", () => {
    expect(pyEquals([1, 2], new PyTuple([1, 2]))).toBe(false);
    expect(pyEquals([1, [float(2)]], [1, [2]])).toBe(true);
    expect(pyEquals(PyDict.of({ a: 1, b: 2 }), PyDict.of({ b: 2, a: float(1) }))).toBe(true);
    expect(pyEquals(PyDict.of({ a: 1 }), PyDict.of({ a: 1, b: 2 }))).toBe(false);
  });

  it("dict keys 1, 1.0 and True are one key; the first key object and its position are kept", () => {
    const d = new PyDict([[1, "a"], ["x", "b"]]);
    d.set(true, "c");
    d.set(float(1), "d");
    expect(d.size).toBe(2);
    expect(pyRepr(d)).toBe("{1: 'd', 'x': 'b'}");
    expect(() => hashKey([1])).toThrow("unhashable type: 'list'");
  });

  it("containers follow Python: len and indexing by code point, `in` is substring for strings", () => {
    expect(len("a😀b")).toBe(3);
    expect(getItem("a😀b", 1)).toBe("😀");
    expect(getItem([1, 2, 3], -1)).toBe(3);
    expect(iterate(PyDict.of({ a: 1, b: 2 }))).toEqual(["a", "b"]);
    expect(contains("epoch_millis", "")).toBe(true);
    expect(contains([float(1)], true)).toBe(true);
    expect(() => contains(5, 1)).toThrow("argument of type 'int' is not iterable");
  });
});

describe("repr and json.dumps", () => {
  it("picks quotes and escapes as Python's repr", () => {
    expect(pyRepr(["it's", `both ' and "`, "tab\tnl\n\u0000é"])).toBe(`["it's", 'both \\' and "', 'tab\\tnl\\n\\x00é']`);
    expect(pyRepr([new PyTuple([1]), new PyTuple([]), new PySet(), null, true, float(2)])).toBe("[(1,), (), set(), None, True, 2.0]");
  });

  it("writes json.dumps text: separators, ASCII escapes, float literals, stringified keys", () => {
    expect(jsonDumps(PyDict.of({ a: [1, float(2), "é"], b: null }))).toBe('{"a": [1, 2.0, "\\u00e9"], "b": null}');
    expect(jsonDumps(new PyDict([[1, true], [float(1.5), false], [null, 0]]))).toBe('{"1": true, "1.5": false, "null": 0}');
    expect(jsonDumps([float(NaN), float(1e16), float(-0)])).toBe("[NaN, 1e+16, -0.0]");
    expect(() => jsonDumps(PyDict.of({ r: new PyOpaque("mpf", "mpf('1.0')") }))).toThrow(NotSerializable);
    expect(jsonDumpsIndented(PyDict.of({ a: [1], b: new PyDict() }), 4)).toBe('{\n    "a": [\n        1\n    ],\n    "b": {}\n}');
  });
});

describe("JSON parsing keeps floats apart from ints", () => {
  it("reads 1.0 as a float, 1 as an int, big integers exactly", () => {
    const value = parsePyJson('{"a": 1.0, "b": 1, "c": 1e2, "d": 12345678901234567890, "e": [NaN, -Infinity]}') as PyDict;
    expect(value.get("a")).toEqual(float(1));
    expect(value.get("b")).toBe(1);
    expect(value.get("c")).toEqual(float(100));
    expect(value.get("d")).toBe(12345678901234567890n);
    expect(jsonDumps(value)).toBe('{"a": 1.0, "b": 1, "c": 100.0, "d": 12345678901234567890, "e": [NaN, -Infinity]}');
  });

  it("rejects what json.loads rejects, with Python's message", () => {
    expect(() => parsePyJson('{"a": tru}')).toThrow(JsonDecodeError);
    expect(() => parsePyJson('{"a": 1} x')).toThrow("Extra data: line 1 column 10 (char 9)");
  });
});

describe("arithmetic follows Python's types and errors", () => {
  it("keeps ints int, makes / a float, mixes to float", () => {
    expect(ops.add(2, 3)).toBe(5);
    expect(ops.truediv(6, 3)).toEqual(float(2));
    expect(ops.add(2, float(0.5))).toEqual(float(2.5));
    expect(ops.floordiv(-7, 2)).toBe(-4);
    expect(ops.mod(-7, 2)).toBe(1);
    expect(ops.pow(2, 100)).toBe(2n ** 100n);
    expect(ops.add(true, true)).toBe(2);
  });

  it("raises Python's TypeErrors", () => {
    expect(() => ops.add("a", 1)).toThrow('can only concatenate str (not "int") to str');
    expect(() => ops.sub("a", 1)).toThrow("unsupported operand type(s) for -: 'str' and 'int'");
    expect(() => ops.mul("ab", float(2))).toThrow("can't multiply sequence by non-int of type 'float'");
    expect(() => ops.compare("<", "a", 1)).toThrow("'<' not supported between instances of 'str' and 'int'");
    expect(() => ops.truediv(1, 0)).toThrow(PyError);
  });
});

describe("string methods", () => {
  it("splitlines knows Python's line breaks and drops a trailing one", () => {
    expect(splitlines("a\r\nb\rc\u2028d\n")).toEqual(["a", "b", "c", "d"]);
    expect(splitlines("")).toEqual([]);
    expect(splitWhitespace("  a \t b\u3000c ")).toEqual(["a", "b", "c"]);
  });
});

describe("Python's random module, bit for bit", () => {
  // Known answers from CPython's random.Random.
  it("random() and randint() from an int seed", () => {
    const r = new PythonRandom(42);
    expect(r.random()).toBe(0.6394267984578837);
    expect(r.randint(10000, 99999)).toBe(13278);
    expect(r.uniform(-10.0, 40.0)).toBe(27.077524987991644);
    expect(r.getrandbits(40)).toBe(245864938384n);
    expect(r.randint(100000000000, 999999999999)).toBe(908053162473);
    expect(new PythonRandom(0).random()).toBe(0.8444218515250481);
  });

  it("the message-id seed gives upstream's first ids", () => {
    const r = new PythonRandom(200191);
    expect([r.randint(10000, 99999), r.randint(10000, 99999), r.randint(10000, 99999)]).toEqual([67410, 41772, 24547]);
  });

  it("a seed wider than 32 bits is split into words", () => {
    const r = new PythonRandom(2n ** 40n + 123n);
    expect(r.randint(1, 6)).toBe(4);
    expect(r.random()).toBe(0.00375904797666915);
  });
});

describe("mpmath and decimal, as MathAPI prints them", () => {
  const mpLog = (value: number, base: number, dps: number): string => {
    const prec = dpsToPrec(dps);
    return mpfRepr(div(log(exact(BigInt(value), 1n), prec), log(exact(BigInt(base), 1n), prec), prec), prec);
  };

  it("log(value)/log(base) at a decimal precision", () => {
    expect(mpLog(20, 10, 2)).toBe("mpf('1.3027')");
    expect(mpLog(36, 6, 4)).toBe("mpf('2.0')");
    expect(mpLog(980, 20, 10)).toBe("mpf('2.299121531134')");
  });

  it("Decimal square roots at a context precision", () => {
    expect(decimalRepr(decimalSqrt(decimalFromDouble(2), 5))).toBe("Decimal('1.4142')");
    expect(decimalRepr(decimalSqrt(decimalFromInt(16n), 5))).toBe("Decimal('4')");
    expect(decimalRepr(decimalSqrt(decimalFromDouble(2.25), 5))).toBe("Decimal('1.5')");
    expect(decimalRepr(decimalSqrt(decimalFromDouble(1e20), 2))).toBe("Decimal('1.0E+10')");
  });
});

describe("strptime", () => {
  it("accepts Python's field widths and rejects what Python rejects", () => {
    expect(formatDateTime(strptime("2024-9-1", "%Y-%m-%d"))).toBe("2024-09-01 00:00:00");
    expect(() => strptime("2024-02-30", "%Y-%m-%d")).toThrow("day is out of range for month");
    expect(() => strptime("2024-13-01", "%Y-%m-%d")).toThrow("does not match format");
    expect(() => strptime("2024-01-01x", "%Y-%m-%d")).toThrow("unconverted data remains: x");
  });
});

