import { pyRepr } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import {
  DecodeError,
  decodeJavaLikeCalls,
  decodeMultiTurnStep,
  decodePythonCalls,
  decodePythonExecution,
  decodeSingleTurnResult,
  OutputFormatError,
} from "./decode.js";
import type { DecodedCall } from "./decode.js";
import { parsePyJson } from "./py/json.js";
import { parseExpression, PySyntaxError } from "./py/syntax.js";
import { unparse } from "./py/unparse.js";

function show(calls: DecodedCall[]): string[] {
  return calls.map((c) => `${c.name}(${[...c.args].map(([k, v]) => `${k}=${pyRepr(v)}`).join(", ")})`);
}

describe("the Python expression parser", () => {
  it("reads strings in every quoting style", () => {
    const tree = parseExpression(String.raw`f(a='x\'y', b="q\"", c='''tri'ple''', d=r'\d+', e='a' "b", f='\x41\u00e9\n')`);
    expect(tree.kind === "call" && tree.keywords.map((k) => (k.value.kind === "constant" ? k.value.value : undefined))).toEqual([
      "x'y",
      'q"',
      "tri'ple",
      "\\d+",
      "ab",
      "Aé\n",
    ]);
  });

  it("reads numbers as Python does", () => {
    const values = (source: string) => {
      const tree = parseExpression(source);
      return tree.kind === "list" ? tree.elts.map((e) => (e.kind === "constant" ? pyRepr(e.value) : unparse(e))) : [];
    };
    expect(values("[1, 1.0, 1e3, 0x1F, 1_000, .5, 5., 99999999999999999999]")).toEqual([
      "1",
      "1.0",
      "1000.0",
      "31",
      "1000",
      "0.5",
      "5.0",
      "99999999999999999999",
    ]);
  });

  it("tells string prefixes from names that start with the same letters", () => {
    // Python: u'x', R'x', Rb'x' (bytes), bR'x' (bytes); ur'x' and bu'x' are a name followed by a string.
    const constant = (source: string) => {
      const tree = parseExpression(source);
      return tree.kind === "constant" ? tree.value : tree.kind;
    };
    expect(constant("u'x'")).toBe("x");
    expect(constant(String.raw`R'\d'`)).toBe(String.raw`\d`);
    expect(constant("unit")).toBe("name");
    expect(constant("rb")).toBe("name");
    const keywords = (source: string) => {
      const tree = parseExpression(source);
      return tree.kind === "call" ? tree.keywords.map((k) => [k.arg, k.value.kind === "constant" ? k.value.value : k.value.kind]) : [];
    };
    expect(keywords("f(base=b, unit='u', fmt=f, rate=r)")).toEqual([
      ["base", "name"],
      ["unit", "u"],
      ["fmt", "name"],
      ["rate", "name"],
    ]);
    for (const source of ["Rb'x'", "bR'x'", "ur'x'", "bu'x'"]) expect(() => parseExpression(source), source).toThrow(PySyntaxError);
  });

  it("reads a number up to where Python's tokenizer ends it", () => {
    const elements = (source: string) => {
      const tree = parseExpression(source);
      return tree.kind === "list" ? tree.elts.map((e) => (e.kind === "constant" ? pyRepr(e.value) : unparse(e))) : [];
    };
    // 12 then ] and 7 then , are plain integers; 0o17 is 15, 0b101 is 5, 2E2 is 200.0, 1_2 is 12.
    expect(elements("[12, 7,0o17,0b101, 2E2, 1_2]")).toEqual(["12", "7", "15", "5", "200.0", "12"]);
    for (const source of ["10j", "1_", "0777"]) expect(() => parseExpression(source), source).toThrow(PySyntaxError);
  });

  it("rejects what Python's parser rejects, and what would need evaluation", () => {
    for (const source of ["f(a=1, a=2)", "f(a=1, 2)", "f(", "007", "f'x{y}'", "lambda: 1", "[x for x in y]", "a < b"]) {
      expect(() => parseExpression(source), source).toThrow(PySyntaxError);
    }
  });

  it("unparses like ast.unparse", () => {
    for (const [source, expected] of [
      ["f(x)", "f(x)"],
      ["a.b.c( 1 ,k = 'v' )", "a.b.c(1, k='v')"],
      ["(1 + 2) * 3", "(1 + 2) * 3"],
      ["-x ** 2", "-x ** 2"],
      ["(1,)", "(1,)"],
      ["d['k'][0:2]", "d['k'][0:2]"],
    ]) {
      expect(unparse(parseExpression(source!))).toBe(expected);
    }
  });
});

describe("decoding a prompting model's Python call list (upstream's decoder and its quirks)", () => {
  it("adds missing brackets and strips backticks", () => {
    expect(show(decodePythonCalls("```\n[get_weather(city='Paris', days=3)]\n```"))).toEqual(["get_weather(city='Paris', days=3)"]);
    expect(show(decodePythonCalls("math.hypot(x=3, y=4.0), f(z=None)"))).toEqual(["math.hypot(x=3, y=4.0)", "f(z=None)"]);
  });

  it("keeps keyword arguments only", () => {
    expect(show(decodePythonCalls("[cd('docs', folder='x')]"))).toEqual(["cd(folder='x')"]);
  });

  it("negates every unary operand, reads names as text, computes literal arithmetic", () => {
    expect(show(decodePythonCalls("[f(a=-5, b=+5, c=not True, d=x, e=2*3.0, f='a'+'b')]"))).toEqual(["f(a=-5, b=-5, c=-1, d='x', e=6.0, f='ab')"]);
  });

  it("turns nested calls into source text or a {name: args} dict", () => {
    expect(show(decodePythonCalls("[f(a=g(1), b=h(x=2))]"))).toEqual(["f(a='g(1)', b={'h': {'x': 2}})"]);
  });

  it("fails on anything that is not a list of calls", () => {
    expect(() => decodePythonCalls("I cannot help with that.")).toThrow(DecodeError);
    expect(() => decodePythonCalls("[f(a=1), 2]")).toThrow(DecodeError);
    expect(decodePythonCalls("[]")).toEqual([]);
  });

  it("writes executable call strings as upstream does, a dict of dicts as a nested call", () => {
    expect(decodePythonExecution("[mv(source='a.txt', destination='b'), f(x={'k': [1, 2.0]}), g(y={'h': {'z': 1}})]")).toEqual([
      "mv(source='a.txt', destination='b')",
      "f(x={'k': [1, 2.0]})",
      "g(y=h(z=1))",
    ]);
    expect(() => decodePythonExecution("[edit_ticket(ticket_id=1, updates={})]")).toThrow(DecodeError);
  });
});

describe("saved results in upstream's forms", () => {
  it("accepts decoded calls, function-calling JSON strings and prompting text", () => {
    const decoded = parsePyJson('[{"add": {"a": 1, "b": 2.0}}]');
    const fc = parsePyJson('[{"add": "{\\"a\\": 1, \\"b\\": 2.0}"}]');
    expect(show(decodeSingleTurnResult(decoded, "python"))).toEqual(["add(a=1, b=2.0)"]);
    expect(show(decodeSingleTurnResult(fc, "python"))).toEqual(["add(a=1, b=2.0)"]);
    expect(show(decodeSingleTurnResult("[add(a=1, b=2.0)]", "python"))).toEqual(["add(a=1, b=2.0)"]);
  });

  it("rejects other shapes as the wrong output format", () => {
    expect(() => decodeSingleTurnResult(parsePyJson('{"add": {}}'), "python")).toThrow(OutputFormatError);
    expect(() => decodeSingleTurnResult(parsePyJson('[{"a": {}, "b": {}}]'), "python")).toThrow(OutputFormatError);
    expect(() => decodeSingleTurnResult(parsePyJson('[{"add": [1]}]'), "python")).toThrow(OutputFormatError);
  });

  it("reads Java and JavaScript call text: the first call, values as source text", () => {
    expect(
      show(decodeJavaLikeCalls('[Geometry.create(controller="mapController", size=new int[]{1, 2}, map=new HashMap<String, Integer>())]', "java")),
    ).toEqual(["Geometry.create(controller='mapController', size='new int[]{1, 2}', map='new HashMap<String, Integer>()')"]);
    expect(show(decodeJavaLikeCalls("validate(inputField='userInputField', isComplete=true)", "javascript"))).toEqual([
      "validate(inputField='userInputField', isComplete='true')",
    ]);
    expect(() => decodeJavaLikeCalls("[f(a=1, a=2)]", "java")).toThrow(DecodeError);
  });

  it("decodes multi-turn steps into call strings", () => {
    expect(decodeMultiTurnStep("[cd(folder='x')]")).toEqual(["cd(folder='x')"]);
    expect(decodeMultiTurnStep(parsePyJson('[{"cd": "{\\"folder\\": \\"x\\"}"}, {"ls": {"a": true}}]'))).toEqual(["cd(folder='x')", "ls(a=True)"]);
  });
});
