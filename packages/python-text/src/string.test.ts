import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { codePointLength, compareCodePoints, isSpace, lstrip, rstrip, sortCodePoints, splitlines, splitWhitespace, strip, strRepr } from "./string.js";

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
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }),
        fc.string({ unit: "grapheme" }),
        (a, b) => Math.sign(compareCodePoints(a, b)) === Math.sign(byCodePoints(a, b)),
      ),
    );
  });

  it("sorts in place and returns the same array", () => {
    const keys = ["b", "a"];
    expect(sortCodePoints(keys)).toBe(keys);
    expect(keys).toEqual(["a", "b"]);
  });
});

describe("str methods whose JavaScript look-alikes differ", () => {
  it("splitlines breaks at Python's line boundaries and drops a last empty line", () => {
    // 'a\r\nb\rc\u2028d\x0be\x1cf\n'.splitlines() == ['a', 'b', 'c', 'd', 'e', 'f']
    expect(splitlines("a\r\nb\rc\u2028d\x0be\x1cf\n")).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(splitlines("")).toEqual([]);
    expect(splitlines("\n\nx")).toEqual(["", "", "x"]);
  });

  it("split() splits at runs of Python whitespace, which has no U+FEFF but has U+001C", () => {
    // '  a \t b\u3000c\x1cd\ufeffe '.split() == ['a', 'b', 'c', 'd\ufeffe']
    expect(splitWhitespace("  a \t b\u3000c\x1cd\ufeffe ")).toEqual(["a", "b", "c", "d\ufeffe"]);
    expect(splitWhitespace(" ")).toEqual([]);
    expect(isSpace("\x85")).toBe(true);
    expect(isSpace("\ufeff")).toBe(false);
  });

  it("strip, lstrip and rstrip take whitespace or a set of characters", () => {
    // ' \u2003x y\n'.strip() == 'x y'; '`[f()]`\n'.strip('`\n ') == '[f()]'; 'xxayxx'.lstrip('x') == 'ayxx'
    expect(strip(" \u2003x y\n")).toBe("x y");
    expect(strip("`[f()]`\n", "`\n ")).toBe("[f()]");
    expect(lstrip("xxayxx", "x")).toBe("ayxx");
    expect(rstrip("xxayxx", "x")).toBe("xxay");
    expect(rstrip("/a/b//", "/")).toBe("/a/b");
    // '😀a😀'.strip('😀') == 'a'
    expect(strip("😀a😀", "😀")).toBe("a");
    expect(strip("aaa", "a")).toBe("");
    // '😀ab😀'.strip('ab') == '😀ab😀'; 'a😀'.rstrip('a') == 'a😀'; ' 😀 '.strip() == '😀'
    expect(strip("😀ab😀", "ab")).toBe("😀ab😀");
    expect(rstrip("a😀", "a")).toBe("a😀");
    expect(strip(" 😀 ")).toBe("😀");
  });

  it("len counts code points", () => {
    expect(codePointLength("a😀b")).toBe(3);
    expect(codePointLength("lone \ud800")).toBe(6);
    expect(codePointLength("")).toBe(0);
  });
});
