import { pyRepr, type PyObject } from "@envace/python-text";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { convertJava } from "./java.js";
import { convertJavaScript } from "./javascript.js";
import { javaArray, javaArrayList, javaHashMap, javaScriptArray, javaScriptDict } from "./testing/upstream-patterns.js";

// The scanners must answer what upstream's regular expressions answer. Short texts built from the
// pieces those expressions look for reach their corners (unclosed rows, lines that end early,
// `",` without a `)`, whitespace on both sides of braces) while backtracking stays cheap.
function outcome(run: () => PyObject): string {
  try {
    return pyRepr(run());
  } catch (error) {
    return `raised ${String(error)}`;
  }
}

function texts(pieces: string[], prefixes: string[]): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...prefixes), fc.array(fc.constantFrom(...pieces), { maxLength: 16 })).map(([prefix, rest]) => prefix + rest.join(""));
}

const RUNS = { numRuns: 4000 };

describe("the converters' scanners against upstream's expressions", () => {
  it("JavaScript arrays, flat and nested", () => {
    const pieces = ["[", "]", "[[", "],[", ",", " ", "\n", "1", "2.5", "'a'", '"b"', ")", "x", "\t"];
    fc.assert(
      fc.property(
        texts(pieces, ["", "[", "[[", "new Array(", "new  Array([", "new Array(\n["]),
        fc.constantFrom(undefined, "integer", "String"),
        (text, itemType) => {
          const code = text.trim();
          expect(outcome(() => convertJavaScript(text, "array", itemType))).toBe(outcome(() => javaScriptArray(code, itemType)));
        },
      ),
      RUNS,
    );
  });

  it("JavaScript dicts", () => {
    const pieces = ["{", "}", ":", ",", " ", "a", "'k'", "1", "[", "]", "\n", '"', "::", ", "];
    fc.assert(
      fc.property(texts(pieces, ["", "{", "{a: 1", "{'k': [1, 2], "]), (text) => {
        expect(outcome(() => convertJavaScript(text, "dict"))).toBe(outcome(() => javaScriptDict(text.trim())));
      }),
      RUNS,
    );
  });

  it("Java ArrayLists", () => {
    const pieces = [
      "new",
      " ",
      "ArrayList<",
      ">",
      "Integer",
      "(Arrays.asList(",
      "(",
      ")",
      "))",
      "()",
      "{{",
      "}}",
      "{",
      "}",
      "add(",
      "1",
      ",",
      "\n",
      '"s"',
      ";",
    ];
    fc.assert(
      fc.property(texts(pieces, ["", "new ArrayList<>(", "new ArrayList<Integer>() {{", "x new\tArrayList<>(Arrays.asList("]), (text) => {
        expect(outcome(() => convertJava(text, "ArrayList"))).toBe(outcome(() => javaArrayList(text)));
      }),
      RUNS,
    );
  });

  it("Java arrays", () => {
    const pieces = ["new", " ", "int", "[]", "{", "}", "1", ",", "\n", "x", "\t", "2.5f"];
    fc.assert(
      fc.property(texts(pieces, ["", "new int[]", "new String[] {"]), (text) => {
        expect(outcome(() => convertJava(text, "Array"))).toBe(outcome(() => javaArray(text)));
      }),
      RUNS,
    );
  });

  it("Java HashMaps", () => {
    const pieces = ["new", " ", "HashMap<", "String, Integer", ">", "()", "(", ")", "{", "}", "{{", "}}", 'put("', '",', "k", "1", "\n", ";", '"', "\t"];
    fc.assert(
      fc.property(texts(pieces, ["", "new HashMap<", "new HashMap<String, Integer>() {{", 'new HashMap<>() {{ put("a", ']), (text) => {
        expect(outcome(() => convertJava(text, "HashMap"))).toBe(outcome(() => javaHashMap(text)));
      }),
      RUNS,
    );
  });

  it("answers hand-worked cases as upstream does", () => {
    expect(pyRepr(convertJavaScript("[[1, 2], [3]]", "array"))).toBe("[[1, 2], [3]]");
    expect(pyRepr(convertJavaScript("{a: 1, b: 'x, y'}", "dict"))).toBe("{'a': 1, 'b': 'x, y'}");
    expect(pyRepr(convertJava('new HashMap<String, Integer>() {{ put("a", 1); put("b", 2); }}', "HashMap"))).toBe("{'a': 1, 'b': 2}");
    expect(pyRepr(convertJava("new ArrayList<Integer>() {{ add(1); add(2); }}", "ArrayList"))).toBe("[1, 2]");
    expect(pyRepr(convertJava("new int[]{1, 2}", "Array"))).toBe("[1, 2]");
  });
});
