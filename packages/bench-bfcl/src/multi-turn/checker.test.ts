import type { PyHashDict } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import type { MultiTurnEntry } from "../data.js";
import { parsePyJson } from "../py/json.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "./checker.js";

function entry(
  groundTruth: string[][],
  config = '{"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {"a.txt": {"type": "file", "content": "hello"}}}}}}',
): MultiTurnEntry {
  return {
    kind: "multi_turn",
    id: "multi_turn_test_0",
    category: "multi_turn_test",
    turns: groundTruth.map(() => [{ role: "user", content: "..." }]),
    initialConfig: parsePyJson(config) as PyHashDict,
    involvedClasses: ["GorillaFileSystem"],
    functions: [],
    rawFunctions: [],
    heldOut: new Map(),
    groundTruth,
    longContext: false,
    source: { file: "test" },
  };
}

describe("the multi-turn checker", () => {
  const gold = [["mkdir(dir_name='docs')"], ["cat(file_name='a.txt')"]];

  it("accepts the gold calls and records each call with its result", () => {
    const verdict = checkMultiTurn(entry(gold), oracleMultiTurnCalls(entry(gold)));
    expect(verdict.valid).toBe(true);
    expect(verdict.turns).toEqual([
      [{ call: "mkdir(dir_name='docs')", result: "None" }],
      [{ call: "cat(file_name='a.txt')", result: '{"file_content": "hello"}' }],
    ]);
  });

  it("accepts extra calls and a result already produced in an earlier turn", () => {
    const model = [[["cat(file_name='a.txt')", "mkdir(dir_name='docs')"], ["ls()"]], [["pwd()"]]];
    expect(checkMultiTurn(entry(gold), model).valid).toBe(true);
  });

  it("rejects a different final state", () => {
    const verdict = checkMultiTurn(entry(gold), [[["mkdir(dir_name='other')"]], [["cat(file_name='a.txt')"]]]);
    expect(verdict).toMatchObject({ valid: false, errorType: "multi_turn:instance_state_mismatch" });
  });

  it("rejects a missing gold result even when the state matches", () => {
    const verdict = checkMultiTurn(entry(gold), [[["mkdir(dir_name='docs')"]], [["ls()"]]]);
    expect(verdict).toMatchObject({ valid: false, errorType: "multi_turn:execution_response_mismatch" });
  });

  it("counts duplicate gold results: each needs its own model result", () => {
    const twice = [["cat(file_name='a.txt')", "cat(file_name='a.txt')"]];
    expect(checkMultiTurn(entry(twice), [[["cat(file_name='a.txt')"]]]).valid).toBe(false);
    expect(checkMultiTurn(entry(twice), [[["cat(file_name='a.txt')"], ["cat(file_name='a.txt')"]]]).valid).toBe(true);
  });

  it("rejects a turn with gold calls but no model step", () => {
    expect(checkMultiTurn(entry(gold), [[["mkdir(dir_name='docs')"]], []])).toMatchObject({ valid: false, errorType: "multi_turn:empty_turn_model_response" });
  });

  it("does not check a turn whose gold list is empty (miss_func, miss_param), but runs its calls", () => {
    const withHeldOut = [["mkdir(dir_name='docs')"], [], ["cat(file_name='a.txt')"]];
    expect(checkMultiTurn(entry(withHeldOut), [[["mkdir(dir_name='docs')"]], [], [["cat(file_name='a.txt')"]]]).valid).toBe(true);
    // A call made at the held-out turn still changes the state checked at the next turn.
    expect(checkMultiTurn(entry(withHeldOut), [[["mkdir(dir_name='docs')"]], [["touch(file_name='b.txt')"]], [["cat(file_name='a.txt')"]]]).valid).toBe(false);
  });

  it("fails a model that stopped early (the step limit), whatever it did", () => {
    expect(checkMultiTurn(entry(gold), [[["mkdir(dir_name='docs')"]]])).toMatchObject({ valid: false, errorType: "multi_turn:force_terminated" });
  });
});
