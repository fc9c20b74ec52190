import type { Tokenizer } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { rehearsedCalls } from "./candidates.js";
import type { Grounding } from "./replay.js";
import {
  agreementScore,
  groundingMetrics,
  rehearseBonus,
  rehearseBonuses,
  rehearseTargetText,
  rowKey,
  targetRow,
  targetRows,
  type GroundedCall,
} from "./uses.js";
import { fail, ok, trajectory } from "./testing/ledger.js";

/** One token per UTF-16 code unit, stop token 0. */
const chars: Tokenizer = {
  vocabSize: 65_536,
  stopTokenIds: [0],
  encode: (text) => Array.from({ length: text.length }, (_, i) => text.charCodeAt(i)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

const t = trajectory("r/0", [
  [{ name: "open_account", answer: (c) => ok(c, { id: "A1" }) }],
  [{ name: "deposit", arguments: { id: "A1", amount: 5 }, answer: (c) => ok(c, { balance: 7 }) }],
]);
const [openCall, depositCall] = rehearsedCalls(t) as [ReturnType<typeof rehearsedCalls>[number], ReturnType<typeof rehearsedCalls>[number]];
const compared = (exact: boolean, keys: boolean, status: boolean, real = ok(depositCall.call, { balance: 5 })): Grounding => ({
  kind: "compared",
  real,
  calls: 2,
  exact,
  keys,
  status,
});

describe("the reward term", () => {
  it("is λ·(2a − 1) with a the mean of the three agreements: +λ exact, +λ/3 keys, −λ/3 status, −λ none", () => {
    expect(agreementScore({ exact: true, keys: true, status: true })).toBe(1);
    expect(agreementScore({ exact: false, keys: true, status: true })).toBeCloseTo(2 / 3, 12);
    expect(rehearseBonus({ exact: true, keys: true, status: true }, 0.3)).toBeCloseTo(0.3, 12);
    expect(rehearseBonus({ exact: false, keys: true, status: true }, 0.3)).toBeCloseTo(0.1, 12);
    expect(rehearseBonus({ exact: false, keys: false, status: true }, 0.3)).toBeCloseTo(-0.1, 12);
    expect(rehearseBonus({ exact: false, keys: false, status: false }, 0.3)).toBeCloseTo(-0.3, 12);
  });

  it("goes to exactly the compared calls' Rehearse rows", () => {
    const grounded: GroundedCall[] = [
      { candidate: depositCall, grounding: compared(false, true, true) },
      { candidate: openCall, grounding: { kind: "diverged", at: 0, tool: "x", imagined: "ok", real: fail(openCall.call, "X"), calls: 1 } },
    ];
    const bonuses = rehearseBonuses(grounded, 0.3);
    expect([...bonuses.keys()]).toEqual([rowKey({ trajectoryId: "r/0", index: 3 })]);
    expect(bonuses.get(rowKey({ trajectoryId: "r/0", index: 3 }))).toBeCloseTo(0.1, 12);
  });
});

describe("the supervised target", () => {
  it("is the real answer in the Rehearse output format, after the Rehearse row's own prompt", () => {
    const row = targetRow(depositCall, ok(depositCall.call, { balance: 5 }), chars);
    const text = '<execution_result>{"balance":5}</execution_result>';
    expect(row).toEqual({
      taskId: "ledger-1",
      trajectoryId: "r/0",
      rollout: 0,
      index: 3,
      role: "rehearse",
      promptTokens: [1, 2, 3],
      outputTokens: [...Array.from({ length: text.length }, (_, i) => text.charCodeAt(i)), 0],
      logprobs: new Array<number>(text.length + 1).fill(0),
      invalid: false,
    });
    expect(rehearseTargetText(fail(depositCall.call, "NOT_FOUND", "no account A7"))).toBe(
      '<execution_result>{"error":{"code":"NOT_FOUND","message":"no account A7"}}</execution_result>',
    );
    // Only compared calls give targets.
    expect(targetRows([{ candidate: depositCall, grounding: { kind: "exception", stage: "call", at: 1, message: "x", calls: 2 } }], chars)).toEqual([]);
    expect(() => targetRow(depositCall, ok(depositCall.call, {}), { ...chars, stopTokenIds: [] })).toThrow(/stop token/);
  });
});

describe("groundingMetrics", () => {
  it("rates fidelity over the compared calls and counts the rest apart", () => {
    const grounded: GroundedCall[] = [
      { candidate: depositCall, grounding: compared(true, true, true) },
      { candidate: depositCall, grounding: compared(false, true, true) },
      // A real failure predicted (same status) and one missed.
      { candidate: depositCall, grounding: compared(false, false, true, fail(depositCall.call, "NOT_FOUND")) },
      { candidate: depositCall, grounding: compared(false, false, false, fail(depositCall.call, "NOT_FOUND")) },
      { candidate: openCall, grounding: { kind: "diverged", at: 0, tool: "x", imagined: "ok", real: fail(openCall.call, "X"), calls: 1 } },
      { candidate: openCall, grounding: { kind: "exception", stage: "reset", at: 0, message: "x", calls: 0 } },
    ];
    expect(groundingMetrics({ candidates: 10, selected: 7, overBudget: 1, callsRun: 20 }, grounded)).toEqual({
      candidates: 10,
      selected: 7,
      over_budget: 1,
      compared: 4,
      diverged: 1,
      exceptions: 1,
      calls: 9,
      calls_run: 20,
      exact: 0.25,
      keys: 0.5,
      status: 0.75,
      unreadable: 0,
      failures: 2,
      failure_recall: 0.5,
    });
  });
});
