import { jsonLoads } from "@envace/python-text";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { calculate } from "./arithmetic.js";
import { PyException } from "./errors.js";
import { pyDumps } from "./json.js";
import { count, iterate, max, sorted, sub } from "./ops.js";
import { construct, int, list, literal, model, optional, str, type ModelSpec } from "./pydantic.js";
import { bindArguments } from "./signature.js";
import { pyEquals, pyRepr, type PyValue } from "./value.js";

/** The text of the Python exception a call raises. */
function raised(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof PyException) return `${error.pyType}: ${error.text}`;
    throw error;
  }
  throw new Error("nothing was raised");
}

describe("json.dumps as Python writes it", () => {
  it("prints floats as repr() does, and non-finite floats as Python spells them", () => {
    expect(pyDumps([1, 1e16, 1e-5, 342.81, -0])).toBe("[1.0, 1e+16, 1e-05, 342.81, -0.0]");
    expect(pyDumps([NaN, Infinity, -Infinity])).toBe("[NaN, Infinity, -Infinity]");
  });

  it("keeps ints and floats apart and separates with ', ' and ': '", () => {
    expect(pyDumps(new Map<string, PyValue>([["b", 1n], ["a", 1], ["c", [true, null, "x"]]]))).toBe('{"b": 1, "a": 1.0, "c": [true, null, "x"]}');
    expect(pyDumps(123456789012345678901234567890n)).toBe("123456789012345678901234567890");
  });

  it("escapes everything outside printable ASCII, as ensure_ascii does", () => {
    expect(pyDumps('é"\\\n\t\u2028\x7f\x00😀')).toBe('"\\u00e9\\"\\\\\\n\\t\\u2028\\u007f\\u0000\\ud83d\\ude00"');
  });

  it("sorts keys by code point with sort_keys", () => {
    const dict = new Map<string, PyValue>([["b", 1n], ["B", 2n], ["😀", 3n], ["\uffff", 4n], ["a1", new Map([["z", 1n], ["y", 2n]])]]);
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

describe("Python semantics the tools rely on", () => {
  it("evaluates the calculator's arithmetic and errors like eval()", () => {
    const table: [string, string][] = [
      ["2 + 2", "4.0"],
      ["1/3", "0.33"],
      ["7 // 2", "3.0"],
      ["-7//2", "-4.0"],
      ["-7.5//2", "-4.0"],
      ["2 ** 3 ** 2", "512.0"],
      ["-2**2", "-4.0"],
      ["1+-+-1", "2.0"],
      ["0.125", "0.12"],
      ["2**1000", "1.0715086071862673e+301"],
      ["100000000000000000000*1.1", "1.1000000000000002e+20"],
      ["-0.0", "-0.0"],
      ["1.", "1.0"],
      [".5", "0.5"],
      ["00", "0.0"],
    ];
    for (const [expression, text] of table) expect(calculate(expression)).toBe(text);
    const errors: [string, string][] = [
      ["1/0", "ZeroDivisionError: division by zero"],
      ["1.0/0", "ZeroDivisionError: float division by zero"],
      ["1//0", "ZeroDivisionError: integer division or modulo by zero"],
      ["0**-1", "ZeroDivisionError: 0.0 cannot be raised to a negative power"],
      ["()", "TypeError: float() argument must be a string or a real number, not 'tuple'"],
      ["(1)(2)", "TypeError: 'int' object is not callable"],
      ["(-1)**0.5", "TypeError: float() argument must be a string or a real number, not 'complex'"],
      ["", "SyntaxError: invalid syntax (<string>, line 0)"],
      ["1 2", "SyntaxError: invalid syntax (<string>, line 1)"],
      ["01", "SyntaxError: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)"],
      ["((1)", "SyntaxError: '(' was never closed (<string>, line 1)"],
      ["1)", "SyntaxError: unmatched ')' (<string>, line 1)"],
    ];
    for (const [expression, error] of errors) expect(raised(() => calculate(expression))).toBe(error);
  });

  it("binds keyword arguments with Python's own messages", () => {
    const params = [{ name: "order_id" }, { name: "reason" }, { name: "note", default: null }];
    expect(raised(() => bindArguments("RetailTools.cancel", params, new Map<string, PyValue>([["order_id", "#1"], ["x", 1n]])))).toBe(
      "TypeError: RetailTools.cancel() got an unexpected keyword argument 'x'",
    );
    expect(raised(() => bindArguments("RetailTools.cancel", params, new Map()))).toBe(
      "TypeError: RetailTools.cancel() missing 2 required positional arguments: 'order_id' and 'reason'",
    );
    const three = [{ name: "a" }, { name: "b" }, { name: "c" }];
    expect(raised(() => bindArguments("f", three, new Map()))).toBe("TypeError: f() missing 3 required positional arguments: 'a', 'b', and 'c'");
    expect(bindArguments("f", params, new Map([["reason", "x"], ["order_id", "#1"]]))).toEqual(new Map<string, PyValue>([["order_id", "#1"], ["reason", "x"], ["note", null]]));
  });

  it("raises pydantic's validation messages, line for line", () => {
    const passenger: ModelSpec = { name: "Passenger", fields: [{ name: "first_name", type: str }, { name: "last_name", type: str }, { name: "dob", type: str }] };
    expect(raised(() => construct(passenger, new Map<string, PyValue>([["first_name", 1n], ["last_name", "x"]])))).toBe(
      [
        "ValidationError: 2 validation errors for Passenger",
        "first_name",
        "  Input should be a valid string [type=string_type, input_value=1, input_type=int]",
        "    For further information visit https://errors.pydantic.dev/2.12/v/string_type",
        "dob",
        "  Field required [type=missing, input_value={'first_name': 1, 'last_name': 'x'}, input_type=dict]",
        "    For further information visit https://errors.pydantic.dev/2.12/v/missing",
      ].join("\n"),
    );
    const reservation: ModelSpec = {
      name: "R",
      fields: [
        { name: "cabin", type: literal("business", "economy", "basic_economy") },
        { name: "passengers", type: list(model(passenger)) },
        { name: "n", type: int },
        { name: "d", type: optional(str), default: null },
      ],
    };
    const message = raised(() =>
      construct(reservation, new Map<string, PyValue>([["cabin", "first"], ["passengers", [new Map([["first_name", "a"]])]], ["n", 1.5], ["d", "x".repeat(60)]])),
    );
    expect(message).toContain("cabin\n  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='first', input_type=str]");
    expect(message).toContain("passengers.0.last_name\n  Field required [type=missing, input_value={'first_name': 'a'}, input_type=dict]");
    expect(message).toContain("n\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]");
    expect(message.split("\n")[0]).toBe("ValidationError: 4 validation errors for R");
    // Lax mode: numeric strings and integral floats become ints; long reprs are shortened.
    expect(construct(reservation, new Map<string, PyValue>([["cabin", "economy"], ["passengers", []], ["n", " 7 "]])).n).toBe(7n);
    expect(raised(() => construct(reservation, new Map<string, PyValue>([["cabin", "economy"], ["passengers", []], ["n", "y".repeat(100)]])))).toContain(
      "input_value='yyyyyyyyyyyyyyyyyyyyyyyy...yyyyyyyyyyyyyyyyyyyyyyy'",
    );
  });

  it("compares, counts, iterates and orders as Python does", () => {
    expect(pyEquals(1n, 1)).toBe(true);
    expect(pyEquals(true, 1n)).toBe(true);
    expect(pyEquals("1", 1n)).toBe(false);
    expect(pyEquals(new Map<string, PyValue>([["a", 1n], ["b", [2]]]), { b: [2n], a: 1 })).toBe(true);
    expect(count(["a", "a", "b"], "a")).toBe(2);
    expect(iterate("ab")).toEqual(["a", "b"]);
    expect(sorted(["b", "a", "B"])).toEqual(["B", "a", "b"]);
    expect(max(0n, 0)).toBe(0n);
    expect(raised(() => iterate(5n))).toBe("TypeError: 'int' object is not iterable");
    expect(raised(() => sub("a", 1n))).toBe("TypeError: unsupported operand type(s) for -: 'str' and 'int'");
    expect(raised(() => max(0n, "a"))).toBe("TypeError: '>' not supported between instances of 'str' and 'int'");
    expect(raised(() => count(5n, 1n))).toBe("AttributeError: 'int' object has no attribute 'count'");
    expect(pyRepr(new Map<string, PyValue>([["it's", [1n, 2.5, null, true]]]))).toBe(`{"it's": [1, 2.5, None, True]}`);
  });
});
