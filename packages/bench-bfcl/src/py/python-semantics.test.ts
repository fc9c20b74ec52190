import { JsonDecodeError, pyDumps, PyException, type PyHashDict, pyRepr } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { decimalFromDouble, decimalFromInt, decimalRepr, decimalSqrt } from "./decimal.js";
import { formatDateTime, strptime } from "./datetime.js";
import { evaluate } from "./evaluate.js";
import { parsePyJson } from "./json.js";
import { div, dpsToPrec, exact, log, mpfRepr } from "./mpmath.js";
import { PythonRandom } from "./random.js";
import { parseExpression, PySyntaxError } from "./syntax.js";

describe("JSON parsing keeps floats apart from ints", () => {
  it("reads 1.0 as a float, 1 as an int, big integers exactly, into dicts that take any key", () => {
    const value = parsePyJson('{"a": 1.0, "b": 1, "c": 1e2, "d": 12345678901234567890, "e": [NaN, -Infinity]}') as PyHashDict;
    expect(value.get("a")).toBe(1);
    expect(value.get("b")).toBe(1n);
    expect(value.get("c")).toBe(100);
    expect(value.get("d")).toBe(12345678901234567890n);
    value.set(7n, "seven");
    expect(pyDumps(value)).toBe('{"a": 1.0, "b": 1, "c": 100.0, "d": 12345678901234567890, "e": [NaN, -Infinity], "7": "seven"}');
  });

  it("rejects what json.loads rejects, with Python's message", () => {
    expect(() => parsePyJson('{"a": tru}')).toThrow(JsonDecodeError);
    expect(() => parsePyJson('{"a": 1} x')).toThrow("Extra data: line 1 column 10 (char 9)");
  });
});

describe("literals as Python's eval reads them", () => {
  const value = (source: string): string => pyRepr(evaluate(parseExpression(source)));

  it("keeps ints, floats, tuples, sets and dicts with any key apart", () => {
    expect(value("[1, 1.0, 0x1f, 1_000, 1e3, (1,), (), {2}, {1: 'a', (1, 2): None}, -2 ** 2, 7 // -2, 1 / 4]")).toBe(
      "[1, 1.0, 31, 1000, 1000.0, (1,), (), {2}, {1: 'a', (1, 2): None}, -4, -4, 0.25]",
    );
    expect(value("'a' 'b' \"c\\td\"")).toBe("'abc\\td'");
    expect(value("...")).toBe("Ellipsis");
  });

  it("reads integers exactly on both sides of what a double holds, and empty and triple-quoted strings", () => {
    // 15 digits fit a double exactly; 16 may not (9999999999999999 is 1e16 as a double).
    expect(value("[999999999999999, 9999999999999999, 12345678901234567890123, 00, 0]")).toBe(
      "[999999999999999, 9999999999999999, 12345678901234567890123, 0, 0]",
    );
    expect(value(String.raw`['', '''''', '''a'b''', """x""", r'\n', R"q"]`)).toBe(String.raw`['', '', "a'b", 'x', '\\n', 'q']`);
    expect(() => parseExpression("0012")).toThrow("leading zeros in decimal integer literals are not permitted");
  });

  it("raises Python's errors for what it cannot compute", () => {
    expect(() => evaluate(parseExpression("1 / 0"))).toThrow("ZeroDivisionError: division by zero");
    expect(() => evaluate(parseExpression("x"))).toThrow("NameError: name 'x' is not defined");
    expect(() => evaluate(parseExpression("{[1]: 2}"))).toThrow("TypeError: unhashable type: 'list'");
    expect(() => parseExpression("f(a=1, a=2)")).toThrow(PySyntaxError);
    expect(() => parseExpression("007")).toThrow(PyException);
  });
});

describe("Python's random module, bit for bit", () => {
  // Known answers from CPython's random.Random.
  it("random() and randint() from an int seed", () => {
    const r = new PythonRandom(42);
    expect(r.random()).toBe(0.6394267984578837);
    expect(r.randint(10000, 99999)).toBe(13278n);
    expect(r.uniform(-10.0, 40.0)).toBe(27.077524987991644);
    expect(r.getrandbits(40)).toBe(245864938384n);
    expect(r.randint(100000000000, 999999999999)).toBe(908053162473n);
    expect(new PythonRandom(0).random()).toBe(0.8444218515250481);
  });

  it("the message-id seed gives upstream's first ids", () => {
    const r = new PythonRandom(200191);
    expect([r.randint(10000, 99999), r.randint(10000, 99999), r.randint(10000, 99999)]).toEqual([67410n, 41772n, 24547n]);
  });

  it("a generator seeded again with a seed already used starts where the first one started", () => {
    // CPython: random.Random(42) and random.Random(-42) both begin 0.6394267984578837, 0.025010755222666936.
    const first = new PythonRandom(42);
    first.random();
    for (const seed of [42, 42n, -42]) {
      const again = new PythonRandom(seed);
      expect([again.random(), again.random()]).toEqual([0.6394267984578837, 0.025010755222666936]);
    }
  });

  it("a seed wider than 32 bits is split into words", () => {
    const r = new PythonRandom(2n ** 40n + 123n);
    expect(r.randint(1, 6)).toBe(4n);
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
