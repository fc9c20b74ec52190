import { describe, expect, it } from "vitest";
import { exceptionText, type PyValue } from "@envace/python-text";
import { calculate } from "./arithmetic.js";
import { construct, int, list, literal, model, optional, str, type ModelSpec } from "./pydantic.js";

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
    for (const [expression, error] of errors) expect(exceptionText(() => calculate(expression))).toBe(error);
  });

  it("raises pydantic's validation messages, line for line", () => {
    const passenger: ModelSpec = {
      name: "Passenger",
      fields: [
        { name: "first_name", type: str },
        { name: "last_name", type: str },
        { name: "dob", type: str },
      ],
    };
    expect(
      exceptionText(() =>
        construct(
          passenger,
          new Map<string, PyValue>([
            ["first_name", 1n],
            ["last_name", "x"],
          ]),
        ),
      ),
    ).toBe(
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
    const message = exceptionText(() =>
      construct(
        reservation,
        new Map<string, PyValue>([
          ["cabin", "first"],
          ["passengers", [new Map([["first_name", "a"]])]],
          ["n", 1.5],
          ["d", "x".repeat(60)],
        ]),
      ),
    );
    expect(message).toContain("cabin\n  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='first', input_type=str]");
    expect(message).toContain("passengers.0.last_name\n  Field required [type=missing, input_value={'first_name': 'a'}, input_type=dict]");
    expect(message).toContain(
      "n\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]",
    );
    expect(message?.split("\n")[0]).toBe("ValidationError: 4 validation errors for R");
    // Lax mode: numeric strings and integral floats become ints; long reprs are shortened.
    expect(
      construct(
        reservation,
        new Map<string, PyValue>([
          ["cabin", "economy"],
          ["passengers", []],
          ["n", " 7 "],
        ]),
      ).n,
    ).toBe(7n);
    expect(
      exceptionText(() =>
        construct(
          reservation,
          new Map<string, PyValue>([
            ["cabin", "economy"],
            ["passengers", []],
            ["n", "y".repeat(100)],
          ]),
        ),
      ),
    ).toContain("input_value='yyyyyyyyyyyyyyyyyyyyyyyy...yyyyyyyyyyyyyyyyyyyyyyy'");
  });
});
