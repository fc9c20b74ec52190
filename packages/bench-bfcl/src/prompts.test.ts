import type { PyHashDict } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { additionalFunctionsPrompt, systemPrompt, toTools, withLanguageHints } from "./prompts.js";
import { parsePyJson } from "./py/json.js";

const doc = (json: string) => parsePyJson(json) as PyHashDict;

describe("BFCL prompts", () => {
  const area = doc(
    '{"name": "geo.area", "description": "Area.", "parameters": {"type": "dict", "properties": {"base": {"type": "float", "description": "Base.", "default": 1.0}}, "required": ["base"]}}',
  );

  it("builds upstream's default system prompt around indented JSON docs", () => {
    const prompt = systemPrompt([area]);
    // Upstream's template joins persona and task without a space, and leaves a double space.
    expect(prompt.startsWith("You are an expert in composing functions.You are given a question")).toBe(true);
    expect(prompt).toContain("params_name2=params_value2...), func_name2(params)].  You SHOULD NOT include any other text in the response.");
    expect(
      prompt.endsWith(
        'Here is a list of functions in json format that you can invoke.\n[\n    {\n        "name": "geo.area",\n        "description": "Area.",\n        "parameters": {\n            "type": "dict",\n            "properties": {\n                "base": {\n                    "type": "float",\n                    "description": "Base.",\n                    "default": 1.0\n                }\n            },\n            "required": [\n                "base"\n            ]\n        }\n    }\n]\n',
      ),
    ).toBe(true);
  });

  it("re-offers held-out functions as a Python list", () => {
    expect(additionalFunctionsPrompt([doc('{"name": "f", "x": true}')])).toBe(
      "[{'name': 'f', 'x': True}]\nI have updated some more functions you can choose from. What about now?",
    );
  });

  it("adds language hints; Java and JavaScript parameters become strings in the language's syntax", () => {
    const [python] = withLanguageHints([area], "python");
    expect(python!.get("description")).toBe("Area. Note that the provided function is in Python 3 syntax.");
    const list = doc(
      '{"name": "f", "description": "F.", "parameters": {"type": "dict", "properties": {"xs": {"type": "ArrayList", "description": "Xs.", "items": {"type": "String"}}}}}',
    );
    const [java] = withLanguageHints([list], "java");
    const xs = ((java!.get("parameters") as PyHashDict).get("properties") as PyHashDict).get("xs") as PyHashDict;
    expect(xs.get("type")).toBe("string");
    expect(xs.get("description")).toBe(
      "Xs. This is Java ArrayList type parameter in string representation. The list elements are of type String; they are not in string representation.",
    );
    expect(xs.has("items")).toBe(false);
  });

  it("maps Gorilla types to JSON Schema tools", () => {
    const nested = doc(
      '{"name": "a.b", "description": "D.", "parameters": {"type": "dict", "properties": {"opts": {"type": "dict", "properties": {"n": {"type": "integer", "description": "N."}}}, "pair": {"type": "tuple", "items": {"type": "float"}}, "x": {"type": "any", "description": "X."}}}}',
    );
    expect(toTools([nested])[0]!.function).toEqual({
      name: "a_b",
      description: "D.",
      parameters: {
        type: "object",
        properties: {
          opts: { type: "object", properties: { n: { type: "integer", description: "N." } } },
          pair: { type: "array", items: { type: "number" } },
          x: { type: "string", description: "X." },
        },
      },
    });
  });
});
