import type { PyHashDict } from "@envace/python-text";
import type { GenerateRequest, Generation, Policy } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import type { MultiTurnEntry, SingleTurnEntry } from "./data.js";
import { inferMultiTurn, inferSingleTurn, MAXIMUM_STEP_LIMIT } from "./inference.js";
import { checkMultiTurn } from "./multi-turn/checker.js";
import { ADDITIONAL_FUNCTIONS_PROMPT } from "./prompts.js";
import { parsePyJson } from "./py/json.js";

/** A policy that answers from a script and keeps every request. */
class ScriptPolicy implements Policy {
  readonly id = "script";
  readonly requests: GenerateRequest[] = [];
  constructor(private readonly reply: (request: GenerateRequest, index: number) => Partial<Generation>) {}
  generate(request: GenerateRequest): Promise<Generation> {
    this.requests.push(request);
    const partial = this.reply(request, this.requests.length - 1);
    return Promise.resolve({ role: "act", text: "", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop", ...partial });
  }
}

const fileSystemDocs = [
  parsePyJson(
    '{"name": "cd", "description": "Change directory.", "parameters": {"type": "dict", "properties": {"folder": {"type": "string", "description": "The folder."}}, "required": ["folder"]}}',
  ) as PyHashDict,
  parsePyJson(
    '{"name": "mkdir", "description": "Make a directory.", "parameters": {"type": "dict", "properties": {"dir_name": {"type": "string", "description": "Its name."}}, "required": ["dir_name"]}}',
  ) as PyHashDict,
];

function multiTurnEntry(groundTruth: string[][], heldOutAt?: number): MultiTurnEntry {
  return {
    kind: "multi_turn",
    id: "multi_turn_miss_func_0",
    category: "multi_turn_miss_func",
    turns: groundTruth.map((_, i) => (i === heldOutAt ? [] : [{ role: "user", content: `request ${i}` }])),
    initialConfig: parsePyJson('{"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}') as PyHashDict,
    involvedClasses: ["GorillaFileSystem"],
    functions: [],
    rawFunctions: heldOutAt === undefined ? fileSystemDocs : fileSystemDocs.slice(0, 1),
    heldOut: heldOutAt === undefined ? new Map() : new Map([[heldOutAt, { functions: [], rawFunctions: fileSystemDocs.slice(1) }]]),
    groundTruth,
    longContext: false,
    source: { file: "test" },
  };
}

describe("multi-turn inference (prompting)", () => {
  it("runs steps until the policy makes no call, feeding back results, and re-offers held-out functions", async () => {
    const entry = multiTurnEntry([[], ["mkdir(dir_name='docs')"]], 0);
    const policy = new ScriptPolicy((_request, i) => ({ text: ["I cannot do that yet.", "[mkdir(dir_name='docs')]", "Done."][i] ?? "" }));
    const inference = await inferMultiTurn(entry, { policy, mode: "prompt" });
    expect(inference.calls).toEqual([[], [["mkdir(dir_name='docs')"]]]);
    expect(inference.raw).toEqual([["I cannot do that yet."], ["[mkdir(dir_name='docs')]", "Done."]]);
    expect(checkMultiTurn(entry, inference.calls).valid).toBe(true);

    const [first, second, third] = policy.requests;
    expect(first!.messages[0]!.role).toBe("system");
    expect(first!.messages[0]!.content).toContain('"name": "cd"');
    expect(first!.messages[0]!.content).not.toContain('"name": "mkdir"');
    // The held-out turn has no user message: the functions are offered instead, as a Python list.
    expect(first!.messages[1]!.content).toBe(
      `[{'name': 'mkdir', 'description': 'Make a directory.', 'parameters': {'type': 'dict', 'properties': {'dir_name': {'type': 'string', 'description': 'Its name.'}}, 'required': ['dir_name']}}]\n${ADDITIONAL_FUNCTIONS_PROMPT}`,
    );
    expect(second!.messages.at(-1)).toEqual({ role: "user", content: "request 1" });
    expect(third!.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1_0_0", name: "mkdir(dir_name='docs')", content: "None" });
  });

  it("stops the entry after more than 20 steps in a turn", async () => {
    const entry = multiTurnEntry([["cd(folder='home')"], ["cd(folder='..')"]]);
    const policy = new ScriptPolicy(() => ({ text: "[cd(folder='home')]" }));
    const inference = await inferMultiTurn(entry, { policy, mode: "prompt" });
    expect(inference.forceQuit).toBe(true);
    expect(inference.calls).toHaveLength(1);
    expect(inference.calls[0]).toHaveLength(MAXIMUM_STEP_LIMIT + 1);
    expect(checkMultiTurn(entry, inference.calls)).toMatchObject({ valid: false, errorType: "multi_turn:force_terminated" });
  });

  it("ends a turn on output it cannot decode", async () => {
    const entry = multiTurnEntry([["cd(folder='home')"]]);
    const policy = new ScriptPolicy(() => ({ text: "Let me think about [this" }));
    expect((await inferMultiTurn(entry, { policy, mode: "prompt" })).calls).toEqual([[]]);
  });
});

describe("function-calling mode", () => {
  it("offers tools with JSON Schema types and reads native tool calls", async () => {
    const entry: SingleTurnEntry = {
      kind: "single_turn",
      id: "simple_python_0",
      category: "simple_python",
      question: [{ role: "user", content: "Area of a 10 by 5 triangle?" }],
      functions: [],
      rawFunctions: [
        parsePyJson(
          '{"name": "geo.area", "description": "Area.", "parameters": {"type": "dict", "properties": {"base": {"type": "float", "description": "Base."}}, "required": ["base"]}}',
        ) as PyHashDict,
      ],
      source: { file: "test" },
    };
    const policy = new ScriptPolicy(() => ({ toolCalls: [{ id: "c1", type: "function", function: { name: "geo_area", arguments: '{"base": 10.0}' } }] }));
    const { output, raw } = await inferSingleTurn(entry, { policy, mode: "fc" });
    expect(policy.requests[0]!.tools[0]).toEqual({
      type: "function",
      function: {
        name: "geo_area",
        description: "Area. Note that the provided function is in Python 3 syntax.",
        parameters: {
          type: "object",
          properties: { base: { type: "number", description: "Base. This is a float type value.", format: "float" } },
          required: ["base"],
        },
      },
    });
    expect("calls" in output && output.calls[0]!.name).toBe("geo_area");
    expect(raw).toEqual(parsePyJson('[{"geo_area": "{\\"base\\": 10.0}"}]'));
  });
});
