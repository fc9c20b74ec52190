import { PyHashDict, type PyObject, PyTuple } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import type { SingleTurnEntry } from "../data.js";
import type { DecodedCall } from "../decode.js";
import { parsePyJson } from "../py/json.js";
import { scoreSingleTurn } from "../score.js";
import { checkAst } from "./ast.js";
import type { AnswerCall, FunctionDocLike } from "./ast.js";
import { convertJava } from "./java.js";
import { convertJavaScript } from "./javascript.js";
import { standardize } from "./values.js";

function doc(name: string, properties: Record<string, unknown>, required: string[]): FunctionDocLike {
  return { name, parameters: { properties: properties as FunctionDocLike["parameters"]["properties"], required } };
}

function answer(json: string): AnswerCall[] {
  return (parsePyJson(json) as PyHashDict[]).map((call) => {
    const [name, params] = [...call][0]! as [string, PyHashDict];
    return { name, params: new Map([...params] as [string, PyObject][]) };
  });
}

function call(name: string, args: Record<string, PyObject>): DecodedCall {
  return { name, args: new Map(Object.entries(args)) };
}

const area = doc(
  "geo.area",
  {
    base: { type: "float" },
    unit: { type: "string" },
    sides: { type: "array", items: { type: "integer" } },
    shape: { type: "tuple", items: { type: "float" } },
  },
  ["base"],
);
const areaAnswer = answer('[{"geo.area": {"base": [10.0], "unit": ["square meters", ""], "sides": [[3, 4], ""], "shape": [[1.0, 2.0], ""]}}]');

function valid(output: DecodedCall[], category = "simple_python", functions = [area], expected = areaAnswer): boolean {
  return checkAst({ category, functions, output, answer: expected }).valid;
}

describe("Python type rules", () => {
  it("accepts an int for a float, but not a bool", () => {
    expect(valid([call("geo.area", { base: 10n })])).toBe(true);
    expect(valid([call("geo.area", { base: 10 })])).toBe(true);
    expect(valid([call("geo.area", { base: true })])).toBe(false);
    expect(valid([call("geo.area", { base: "10" })])).toBe(false);
  });

  it("checks array items one level deep, and accepts a tuple for a tuple parameter", () => {
    const strict = answer('[{"geo.area": {"base": [10.0], "sides": [[3, 4]]}}]');
    expect(valid([call("geo.area", { base: 10n, sides: [3n, 4n] })], "simple_python", [area], strict)).toBe(true);
    expect(valid([call("geo.area", { base: 10n, sides: [3, 4n] })], "simple_python", [area], strict)).toBe(false);
    // Upstream quirk: a "" alternative satisfies the item check, and [3.0, 4] == [3, 4].
    expect(valid([call("geo.area", { base: 10n, sides: [3, 4n] })])).toBe(true);
    expect(valid([call("geo.area", { base: 10n, shape: new PyTuple([1, 2]) })])).toBe(true);
    expect(valid([call("geo.area", { base: 10n, sides: new PyTuple([3n, 4n]) })])).toBe(false);
  });

  it("standardises strings: drops spaces and ,./-_*^, lower-cases, turns ' into \"", () => {
    expect(standardize("Square-Meters, 2*x^2 'q'")).toBe('squaremeters2x2"q"');
    // Python: "plain".lower() etc.; text already standard comes back unchanged, other punctuation stays.
    expect(standardize("plain42")).toBe("plain42");
    expect(standardize('x:y(z)="w"')).toBe('x:y(z)="w"');
    expect(standardize("it's")).toBe('it"s');
    expect(standardize("Ünïcode Straße")).toBe("ünïcodestraße");
    expect(standardize("ÉTÉ")).toBe("été");
    expect(valid([call("geo.area", { base: 10n, unit: "Square_Meters." })])).toBe(true);
    expect(valid([call("geo.area", { base: 10n, unit: "square feet" })])).toBe(false);
  });

  it('treats "" as may-be-omitted and rejects an unknown or missing parameter', () => {
    expect(valid([call("geo.area", { base: 10n })])).toBe(true);
    expect(valid([call("geo.area", { unit: "square meters" })])).toBe(false);
    expect(valid([call("geo.area", { base: 10n, colour: "red" })])).toBe(false);
    const strict = answer('[{"geo.area": {"base": [10.0], "unit": ["square meters"]}}]');
    expect(valid([call("geo.area", { base: 10n })], "simple_python", [area], strict)).toBe(false);
  });

  it("compares lists element-wise after standardising their strings", () => {
    const tags = doc("tag", { names: { type: "array", items: { type: "string" } } }, ["names"]);
    const expected = answer('[{"tag": {"names": [["New York", "LA"]]}}]');
    expect(valid([call("tag", { names: ["new york", "la"] })], "simple_python", [tags], expected)).toBe(true);
    expect(valid([call("tag", { names: ["la", "new york"] })], "simple_python", [tags], expected)).toBe(false);
  });

  it("compares dicts key by key; list-of-dict values dict by dict", () => {
    const d = doc("f", { opts: { type: "dict" }, rows: { type: "array", items: { type: "dict" } } }, []);
    const expected = answer('[{"f": {"opts": [{"mode": ["fast", "quick"], "level": [1, ""]}, ""], "rows": [[{"k": ["a"]}, {"k": ["b"]}], ""]}}]');
    expect(valid([call("f", { opts: PyHashDict.of({ mode: "Quick" }) })], "simple_python", [d], expected)).toBe(true);
    expect(valid([call("f", { opts: PyHashDict.of({ mode: "fast", extra: 1n }) })], "simple_python", [d], expected)).toBe(false);
    expect(valid([call("f", { opts: PyHashDict.of({ level: 1n }) })], "simple_python", [d], expected)).toBe(false);
    expect(valid([call("f", { rows: [PyHashDict.of({ k: "a" }), PyHashDict.of({ k: "b" })] })], "simple_python", [d], expected)).toBe(true);
    expect(valid([call("f", { rows: [PyHashDict.of({ k: "b" }), PyHashDict.of({ k: "a" })] })], "simple_python", [d], expected)).toBe(false);
  });

  it("uses Python equality for other values (1 == 1.0 == True) once the type matches", () => {
    const flag = doc("f", { on: { type: "boolean" }, n: { type: "integer" } }, []);
    expect(valid([call("f", { on: true })], "simple_python", [flag], answer('[{"f": {"on": [true]}}]'))).toBe(true);
    expect(valid([call("f", { on: 1n })], "simple_python", [flag], answer('[{"f": {"on": [true]}}]'))).toBe(false);
    expect(valid([call("f", { n: true })], "simple_python", [flag], answer('[{"f": {"n": [1]}}]'))).toBe(false);
    expect(valid([call("f", { n: 1n })], "simple_python", [flag], answer('[{"f": {"n": [1.0]}}]'))).toBe(true);
    expect(valid([call("f", { n: 1n })], "simple_python", [flag], answer('[{"f": {"n": [true, 1]}}]'))).toBe(true);
  });

  it("accepts a value of the reference's own type when the reference contradicts the schema", () => {
    const f = doc("f", { x: { type: "integer" } }, []);
    expect(valid([call("f", { x: "width" })], "simple_python", [f], answer('[{"f": {"x": ["width"]}}]'))).toBe(true);
  });
});

describe("Java and JavaScript string values", () => {
  it("converts Java literals as upstream (its own examples)", () => {
    expect(convertJava("3.14f", "float")).toEqual(3.14);
    expect(convertJava("123L", "long")).toBe(123n);
    expect(convertJava("3.14", "float")).toBe("3.14");
    expect(convertJava("new int[]{1, 2, 3}", "Array", "integer")).toEqual([1n, 2n, 3n]);
    expect(convertJava('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String")).toEqual(["a", "b"]);
    expect(convertJava('new HashMap<String, Object>() {{ put("key1", 1); put("key2", "value"); }}', "HashMap")).toEqual(
      PyHashDict.of({ key1: 1n, key2: "value" }),
    );
    expect(convertJava("'a'", "char")).toBe("'a'");
  });

  it("converts JavaScript literals as upstream (its own examples)", () => {
    expect(convertJavaScript("123n", "Bigint")).toBe(123n);
    expect(convertJavaScript("'abc'", "String")).toBe("abc");
    expect(convertJavaScript("new Array(4.4, 5.5)", "array", "float")).toEqual([4.4, 5.5]);
    expect(convertJavaScript(" [ [ 1, 2 ], [ 3,   4], [5, 6]]", "array", "array")).toEqual([
      [1n, 2n],
      [3n, 4n],
      [5n, 6n],
    ]);
    expect(convertJavaScript("{'key1': 123, 'key2': 'value', 'key3': false}", "dict")).toEqual(PyHashDict.of({ key1: 123n, key2: "value", key3: false }));
  });

  it("requires a string in the language's syntax for every Java/JavaScript value", () => {
    const f = doc("f", { n: { type: "integer" } }, ["n"]);
    const expected = answer('[{"f": {"n": [5]}}]');
    expect(valid([call("f", { n: "5" })], "simple_java", [f], expected)).toBe(true);
    expect(valid([call("f", { n: 5n })], "simple_java", [f], expected)).toBe(false);
    expect(valid([call("f", { n: "5" })], "simple_javascript", [f], expected)).toBe(true);
  });
});

describe("matching modes by category", () => {
  const add = doc("add", { a: { type: "integer" }, b: { type: "integer" } }, ["a", "b"]);
  const mul = doc("mul", { a: { type: "integer" } }, ["a"]);
  const two = answer('[{"add": {"a": [1], "b": [2]}}, {"add": {"a": [3], "b": [4]}}]');

  it("parallel matches in any order with equal counts", () => {
    const calls = [call("add", { a: 3n, b: 4n }), call("add", { a: 1n, b: 2n })];
    expect(valid(calls, "parallel", [add], two)).toBe(true);
    expect(valid(calls.slice(1), "parallel", [add], two)).toBe(false);
    expect(valid([...calls, calls[0]!], "parallel", [add], two)).toBe(false);
  });

  it("multiple picks the function the reference names among several", () => {
    const expected = answer('[{"mul": {"a": [2]}}]');
    expect(valid([call("mul", { a: 2n })], "multiple", [add, mul], expected)).toBe(true);
    expect(valid([call("add", { a: 2n, b: 2n })], "multiple", [add, mul], expected)).toBe(false);
  });

  it("simple needs exactly one call; names may be expected with underscores", () => {
    const expected = answer('[{"geo.area": {"base": [10.0]}}]');
    expect(valid([call("geo.area", { base: 10n }), call("geo.area", { base: 10n })], "simple_python", [area], expected)).toBe(false);
    expect(
      checkAst({
        category: "simple_python",
        functions: [area],
        output: [call("geo_area", { base: 10n })],
        answer: expected,
        options: { underscoreToDot: true },
      }).valid,
    ).toBe(true);
  });

  it("reports a reference the checker cannot read as an invalid verdict", () => {
    const weird = doc("f", { x: { type: "complex" } }, []);
    expect(checkAst({ category: "simple_python", functions: [weird], output: [call("f", { x: 1n })], answer: answer('[{"f": {"x": [1]}}]') })).toMatchObject({
      valid: false,
      errorType: "ast_checker:error",
    });
  });
});

describe("relevance and irrelevance", () => {
  const entry = (category: string): SingleTurnEntry => ({
    kind: "single_turn",
    id: `${category}_0`,
    category,
    question: [],
    functions: [],
    rawFunctions: [],
    source: { file: "x" },
  });

  it("irrelevance passes when no call decodes; relevance when one does", () => {
    expect(scoreSingleTurn(entry("irrelevance"), { decodeError: "no call", wrongFormat: false }).valid).toBe(true);
    expect(scoreSingleTurn(entry("irrelevance"), { calls: [] }).valid).toBe(true);
    expect(scoreSingleTurn(entry("irrelevance"), { calls: [call("f", {})] }).valid).toBe(false);
    expect(scoreSingleTurn(entry("live_relevance"), { calls: [call("f", {})] }).valid).toBe(true);
    expect(scoreSingleTurn(entry("live_relevance"), { calls: [] }).valid).toBe(false);
  });
});
