import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareCodePoints, sortCodePoints, strRepr } from "./string.js";

describe("strRepr is Python's repr(str)", () => {
  // Left: the string; right: what Python 3 prints for repr() of it.
  it.each<[string, string]>([
    ["plain", "'plain'"],
    ["", "''"],
    ["it's", `"it's"`],
    [`both ' and "`, `'both \\' and "'`],
    ["back\\slash", "'back\\\\slash'"],
    ["tab\tnl\n\x00é", "'tab\\tnl\\n\\x00é'"],
    ["\r", "'\\r'"],
    ["\x1b[0m", "'\\x1b[0m'"],
    // DEL, NEL, no-break space and soft hyphen take \x; other non-printables \u or \U.
    ["a\x7f\x85\xa0\xad", "'a\\x7f\\x85\\xa0\\xad'"],
    ["\u2028\u3000x", "'\\u2028\\u3000x'"],
    ["😀\u{e0001}", "'😀\\U000e0001'"],
    ["lone \ud800", "'lone \\ud800'"],
  ])("repr(%j) is %s", (s, text) => {
    expect(strRepr(s)).toBe(text);
  });

  it("backslashes only the quote and the backslash in printable ASCII", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii" }), (s) => {
        const text = strRepr(s);
        const quote = text[0]!;
        return (quote === "'" || quote === '"') && text.at(-1) === quote && text.slice(1, -1).replaceAll(/\\(.)/g, "$1") === s;
      }),
    );
  });
});

describe("Python orders strings by code point", () => {
  it("puts a character beyond U+FFFF after every character of the BMP", () => {
    // sorted(["b", "B", "😀", "\uffff", "a1", "a"]) in Python.
    expect(sortCodePoints(["b", "B", "😀", "\uffff", "a1", "a"])).toEqual(["B", "a", "a1", "b", "\uffff", "😀"]);
    expect(["😀", "\uffff"].sort()).toEqual(["😀", "\uffff"]);
    expect(compareCodePoints("😀", "\uffff")).toBeGreaterThan(0);
    expect(compareCodePoints("ab", "abc")).toBeLessThan(0);
    expect(compareCodePoints("same", "same")).toBe(0);
  });

  it("agrees with comparing the code point arrays", () => {
    const byCodePoints = (a: string, b: string): number => {
      const x = Array.from(a, (c) => c.codePointAt(0)!);
      const y = Array.from(b, (c) => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
      return x.length - y.length;
    };
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => Math.sign(compareCodePoints(a, b)) === Math.sign(byCodePoints(a, b))));
  });

  it("sorts in place and returns the same array", () => {
    const keys = ["b", "a"];
    expect(sortCodePoints(keys)).toBe(keys);
    expect(keys).toEqual(["a", "b"]);
  });
});
