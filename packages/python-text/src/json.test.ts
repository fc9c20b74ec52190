import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonFloat, jsonString, jsonStringUnicode } from "./json.js";
import { bigintModel, JsonDecodeError, jsonLoads, type JsonModel, type JsonScalar, type PyJson } from "./json-loads.js";

describe("the leaves of json.dumps", () => {
  it("escapes everything outside printable ASCII, as ensure_ascii does", () => {
    // Python: json.dumps('é"\\\n\t\u2028\x7f\x00😀\ud800/\x08\x0c\x1f')
    expect(jsonString('é"\\\n\t\u2028\x7f\x00😀\ud800/\b\f\x1f')).toBe('"\\u00e9\\"\\\\\\n\\t\\u2028\\u007f\\u0000\\ud83d\\ude00\\ud800/\\b\\f\\u001f"');
    expect(jsonString("plain text ~")).toBe('"plain text ~"');
    expect(jsonString("")).toBe('""');
  });

  it("writes what JSON.stringify writes for printable ASCII, and pure ASCII always", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme-ascii" }), (s) => jsonString(s) === JSON.stringify(s)));
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => /^[\x20-\x7e]*$/.test(jsonString(s)) && JSON.parse(jsonString(s)) === s));
  });

  it("writes floats as repr() does, and the non-finite ones as Python spells them", () => {
    // Python: json.dumps([1.0, 1e16, 1e-5, nan, inf, -inf, -0.0])
    expect([1, 1e16, 1e-5, NaN, Infinity, -Infinity, -0].map(jsonFloat).join(", ")).toBe("1.0, 1e+16, 1e-05, NaN, Infinity, -Infinity, -0.0");
  });
});

describe("json.dumps(s, ensure_ascii=False)", () => {
  it("escapes only quotes, backslashes and control characters", () => {
    // Python: json.dumps('é"\\\n\t\u2028\x7f\x00😀/\b\f\x1f', ensure_ascii=False)
    expect(jsonStringUnicode('é"\\\n\t\u2028\x7f\x00😀/\b\f\x1f')).toBe('"é\\"\\\\\\n\\t\u2028\x7f\\u0000😀/\\b\\f\\u001f"');
    expect(jsonStringUnicode("国庆节 ~")).toBe('"国庆节 ~"');
  });
});

describe("jsonLoads is Python's json.loads", () => {
  it("reads ints as bigints and floats as numbers, by how they are written", () => {
    // Python: [2, 2.0, 2.0, 0, -0.0, 100.0, 12345678901234567890, inf]
    const value = jsonLoads(" [2, 2.0, 2e0, -0, -0.0, 1E+2, 12345678901234567890, 1e400] ");
    expect(value).toEqual([2n, 2, 2, 0n, -0, 100, 12345678901234567890n, Infinity]);
    expect(jsonLoads("[NaN, Infinity, -Infinity, true, false, null]")).toEqual([NaN, Infinity, -Infinity, true, false, null]);
  });

  it("keeps dict keys in file order, a repeated key in its first place with its last value", () => {
    const dict = jsonLoads('{"9690244451": 1, "1151293680": 2, "b": 3, "9690244451": 4}') as Map<string, PyJson>;
    expect([...dict]).toEqual([
      ["9690244451", 4n],
      ["1151293680", 2n],
      ["b", 3n],
    ]);
  });

  it("decodes escapes, surrogate pairs and lone surrogates alike", () => {
    // Python: json.loads('"\\u00e9\\/\\b\\ud83d\\ude00\\ud800x"') == 'é/\x08😀\ud800x'
    expect(jsonLoads('"\\u00e9\\/\\b\\ud83d\\ude00\\ud800x"')).toBe("é/\b😀\ud800x");
    expect(jsonLoads('"a\\"b\\\\c\\nd\\te\\rf\\fg"')).toBe('a"b\\c\nd\te\rf\fg');
  });

  // Left: the text; right: str() of the JSONDecodeError Python 3 raises for it.
  it.each<[string, string]>([
    ["", "Expecting value: line 1 column 1 (char 0)"],
    ["tru", "Expecting value: line 1 column 1 (char 0)"],
    ["-x", "Expecting value: line 1 column 1 (char 0)"],
    [".5", "Expecting value: line 1 column 1 (char 0)"],
    ["[", "Expecting value: line 1 column 2 (char 1)"],
    ["[1,]", "Expecting value: line 1 column 4 (char 3)"],
    ["[1, 2] x", "Extra data: line 1 column 8 (char 7)"],
    ["01", "Extra data: line 1 column 2 (char 1)"],
    ["1.", "Extra data: line 1 column 2 (char 1)"],
    ["1e", "Extra data: line 1 column 2 (char 1)"],
    ["[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"],
    ['{"a":1', "Expecting ',' delimiter: line 1 column 7 (char 6)"],
    ['{"a" 1}', "Expecting ':' delimiter: line 1 column 6 (char 5)"],
    ['{\n  "a": 1,\n  "b" 2\n}', "Expecting ':' delimiter: line 3 column 7 (char 18)"],
    ["{1: 2}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"],
    ['{"a":1,}', "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"],
    ['"ab', "Unterminated string starting at: line 1 column 1 (char 0)"],
    ['"abc\\n', "Unterminated string starting at: line 1 column 1 (char 0)"],
    ['"ab\\', "Unterminated string starting at: line 1 column 1 (char 0)"],
    ['"a\tb"', "Invalid control character at: line 1 column 3 (char 2)"],
    ['"a\\qb"', "Invalid \\escape: line 1 column 3 (char 2)"],
    ['"\\u12x4"', "Invalid \\uXXXX escape: line 1 column 3 (char 2)"],
    ['"ab\\u12', "Invalid \\uXXXX escape: line 1 column 5 (char 4)"],
    ["\ufeff1", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"],
    // Python counts positions in code points; 😀 is two UTF-16 units.
    ['{"😀": tru}', "Expecting value: line 1 column 7 (char 6)"],
    ['["😀",\n "😀" x]', "Expecting ',' delimiter: line 2 column 6 (char 11)"],
  ])("rejects %j with Python's message", (text, message) => {
    expect(() => jsonLoads(text)).toThrow(JsonDecodeError);
    expect(() => jsonLoads(text)).toThrow(message);
  });

  it("gives the error's reason, line, column and string index", () => {
    const text = '{\n  "a": 1,\n  "b" 2\n}';
    const error = (() => {
      try {
        jsonLoads(text);
      } catch (caught) {
        return caught as JsonDecodeError;
      }
      throw new Error("nothing was thrown");
    })();
    expect(error).toBeInstanceOf(JsonDecodeError);
    expect([error.reason, error.line, error.column, error.offset, text[error.offset]]).toEqual(["Expecting ':' delimiter", 3, 7, 18, "2"]);
  });

  it("round-trips what JSON.stringify writes, as JSON.parse would read it", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const plain = (v: PyJson): unknown => {
          if (typeof v === "bigint") return Number(v);
          if (Array.isArray(v)) return v.map(plain);
          if (v instanceof Map) return Object.fromEntries([...v].map(([k, item]) => [k, plain(item)]));
          return v;
        };
        const text = JSON.stringify(value);
        expect(plain(jsonLoads(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it("tells every number by how it is written, whichever way the text is read", () => {
    // JSON.parse reads most texts: `1.0`, `2.5e1`, `1234567890.000000001` (a double rounds it to
    // an integer) must still be floats, 16-digit ints stay exact, `-0` reaches the model as written.
    const digit = fc.integer({ min: 0, max: 9 }).map(String);
    const digits = fc.string({ unit: digit, minLength: 1, maxLength: 20 });
    const literal = fc.oneof(
      fc
        .tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.string({ unit: digit, maxLength: 18 }))
        .map(([minus, lead, rest]) => `${minus ? "-" : ""}${lead}${rest}`),
      fc.constantFrom("0", "-0"),
      fc
        .tuple(
          digits.map((d) => d.replace(/^0+(?=\d)/, "")),
          digits,
        )
        .map(([whole, fraction]) => `${whole}.${fraction}`),
      fc
        .tuple(
          digits.map((d) => d.replace(/^0+(?=\d)/, "")),
          fc.constantFrom("e", "E", "e+", "e-"),
          fc.integer({ min: 0, max: 30 }),
        )
        .map(([m, e, x]) => `${m}${e}${x}`),
    );
    const literals: JsonModel<string> = {
      int: (written) => `int ${written}`,
      float: (value) => `float ${value}`,
      dict: () => "",
      set: () => undefined,
      list: (items) => items.join(" | "),
    };
    fc.assert(
      fc.property(fc.array(literal, { minLength: 1, maxLength: 6 }), (written) => {
        const expected = written.map((w) => (/[.eE]/.test(w) ? `float ${Number(w)}` : `int ${w}`)).join(" | ");
        expect(jsonLoads(`[${written.join(", ")}]`, literals)).toBe(expected);
      }),
      { numRuns: 500 },
    );
    expect(jsonLoads('{"a": [1234567890.000000001, 9007199254740993]}')).toEqual(new Map([["a", [1234567890, 9007199254740993n]]]));
  });

  it("keeps keys that look like array indices in file order", () => {
    // Python: list(json.loads('{"b": 1, "2": 2, "0": 3, "a": {"10": 4, "1": 5}}'))
    const dict = jsonLoads('{"b": 1, "2": 2, "0": 3, "a": {"10": 4, "1": 5}}') as Map<string, PyJson>;
    expect([...dict.keys()]).toEqual(["b", "2", "0", "a"]);
    expect([...(dict.get("a") as Map<string, PyJson>).keys()]).toEqual(["10", "1"]);
  });

  it("builds whatever values the model makes", () => {
    // A model that keeps every number as its literal, dicts as entry lists and lists frozen.
    interface Dict {
      readonly dict: [string, Literal][];
    }
    type Literal = JsonScalar | readonly Literal[] | Dict;
    const literals: JsonModel<Literal, Dict> = {
      int: (literal) => `int ${literal}`,
      float: (value) => `float ${value}`,
      dict: () => ({ dict: [] }),
      set: ({ dict }, key, value) => {
        const at = dict.findIndex(([k]) => k === key);
        if (at >= 0) dict[at]![1] = value;
        else dict.push([key, value]);
      },
      list: (items) => Object.freeze(items),
    };
    expect(jsonLoads('{"n": [1, 1.0, -2e3, NaN], "n": 7}', literals)).toEqual({ dict: [["n", "int 7"]] });
    const list = jsonLoads("[1, 1.0, -2e3, NaN, []]", literals);
    expect(list).toEqual(["int 1", "float 1", "float -2000", "float NaN", []]);
    expect(Object.isFrozen(list)).toBe(true);
    expect(jsonLoads("5", bigintModel)).toBe(5n);
  });
});
