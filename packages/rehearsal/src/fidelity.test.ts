import { ScriptedPolicy } from "@envace/trajectory";
import type { GenerateRequest, JsonValue, ToolResult } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { commit } from "./commit.js";
import { aggregateFidelity, compareResults, fidelityRecord, probeFidelity } from "./fidelity.js";
import { call, recording, RecordingBank, result, task } from "./testing/bank.js";

const ok = (content: JsonValue): ToolResult => ({ status: "ok", callId: "c", name: "t", content });
const error = (code: string, message = "m"): ToolResult => ({ status: "error", callId: "c", name: "t", error: { code, message } });

describe("compareResults: exact JSON, key set, error/no-error", () => {
  it.each([
    ["same object, other key order", ok({ a: 1, b: [1, { c: 2 }] }), ok({ b: [1, { c: 2 }], a: 1 }), { exact: true, keys: true, status: true }],
    ["same keys, other values", ok({ a: 1, b: 2 }), ok({ a: 3, b: 4 }), { exact: false, keys: true, status: true }],
    ["other keys", ok({ a: 1 }), ok({ a: 1, b: 2 }), { exact: false, keys: false, status: true }],
    ["arrays of objects with the same keys", ok([{ id: 1 }]), ok([{ id: 2 }, { id: 3 }]), { exact: false, keys: true, status: true }],
    ["array against object", ok([]), ok({}), { exact: false, keys: false, status: true }],
    ["same error", error("NOT_FOUND", "no ada"), error("NOT_FOUND", "no ada"), { exact: true, keys: true, status: true }],
    ["same code, other message", error("NOT_FOUND", "gone"), error("NOT_FOUND", "no ada"), { exact: false, keys: true, status: true }],
    ["other code", error("LOCKED"), error("NOT_FOUND"), { exact: false, keys: false, status: true }],
    ["error predicted, success real", error("LOW_BALANCE"), ok({ ok: true }), { exact: false, keys: false, status: false }],
    ["success predicted, error real", ok({ error: "x", detail: 1 }), error("X"), { exact: false, keys: false, status: false }],
  ])("%s", (_name, rehearsed, real, expected) => {
    expect(compareResults(rehearsed, real)).toEqual(expected);
  });
});

/** The probe's answers, by the call it is asked to simulate. */
function probeAnswer(request: GenerateRequest): string {
  const prompt = request.messages.at(-1)?.content ?? "";
  const simulated = JSON.parse(prompt.split("## Tool call to simulate\n")[1]!) as { name: string; arguments: { account?: string; amount?: number } };
  if (simulated.name === "balance") {
    return simulated.arguments.account === "me" ? result({ balance: 120, account: "me" }) : result({ account: "Bob", balance: 7 });
  }
  if (simulated.arguments.amount === 500) return result({ error: { code: "INSUFFICIENT_FUNDS", message: "not enough" } });
  return "the transfer goes through";
}

describe("probeFidelity: rehearse each grounded call from its history and compare", () => {
  async function run() {
    const bank = new RecordingBank();
    const committed = await commit({
      task,
      policy: ScriptedPolicy.queues("actor", {
        act: [
          `${call("balance", { account: "me" })}${call("transfer", { to: "Bob", amount: 500 })}`,
          `${call("balance", { account: "Bob" })}${call("transfer", { to: "Bob", amount: 0 })}`,
          call("transfer", { to: "Bob", amount: 20 }),
          "Sent 20.",
        ],
      }),
      environment: bank,
    });
    const prober = recording(new ScriptedPolicy("prober", probeAnswer));
    const probed = await probeFidelity({ trajectory: committed.trajectory, task: committed.task, policy: prober });
    return { committed, prober, probed };
  }

  it("compares every grounded call; the validator's refusals stay out of the rates", async () => {
    const { probed, prober } = await run();
    expect(probed.comparisons.map((c) => [c.tool, c.step, c.answer, c.exact, c.keys, c.status])).toEqual([
      ["balance", 0, "model", true, true, true],
      ["transfer", 0, "model", false, true, true],
      ["balance", 1, "model", false, true, true],
      ["transfer", 1, "refused", false, false, false],
      ["transfer", 2, "unreadable", false, false, false],
    ]);
    // The amount-0 transfer breaks the schema (minimum 1): refused without asking the model.
    expect(prober.requests).toHaveLength(4);
    expect(prober.requests.every((r) => r.role === "rehearse" && r.sampling.temperature === 1)).toBe(true);
    expect(probed.usage.rehearse?.generations).toBe(4);
  });

  it("aggregates per tool and overall (hand-computed)", async () => {
    const { probed } = await run();
    const report = aggregateFidelity(probed.comparisons.map(fidelityRecord));
    // balance: 2 compared; exact 1 (me), keys 2, status 2; both real lookups succeeded.
    const noFailures = { failures: 0, failuresPredicted: 0, failureRecall: null };
    expect(report.tools.balance).toEqual({
      compared: 2,
      exact: 1,
      keys: 2,
      status: 2,
      unreadable: 0,
      refused: 0,
      exactRate: 0.5,
      keysRate: 1,
      statusRate: 1,
      ...noFailures,
    });
    // transfer: 500 (same code, other message) and 20 (unreadable) compared; 0 refused. Only the
    // 500 really failed (the balance is 120), and the probe predicted that failure.
    const oneFailurePredicted = { failures: 1, failuresPredicted: 1, failureRecall: 1 };
    expect(report.tools.transfer).toEqual({
      compared: 2,
      exact: 0,
      keys: 1,
      status: 1,
      unreadable: 1,
      refused: 1,
      exactRate: 0,
      keysRate: 0.5,
      statusRate: 0.5,
      ...oneFailurePredicted,
    });
    expect(report.overall).toEqual({
      compared: 4,
      exact: 1,
      keys: 3,
      status: 3,
      unreadable: 1,
      refused: 1,
      exactRate: 0.25,
      keysRate: 0.75,
      statusRate: 0.75,
      ...oneFailurePredicted,
    });
    expect(Object.keys(report.tools)).toEqual(["balance", "transfer"]);
  });

  it("rehearses each call from the history before its turn, as in a self-unfolded rollout", async () => {
    const { prober } = await run();
    const [me = "", toBob = "", bob = ""] = prober.requests.map((r) => r.messages.at(-1)?.content ?? "");
    const history = (text: string): string => text.split("## The agent's latest turn")[0]!;
    expect(history(me)).toBe(history(toBob));
    expect(history(me)).not.toContain("[tool result");
    expect(history(bob)).toContain('[tool result: balance]\n{"account":"me","balance":120}');
    expect(history(bob)).toContain('[tool result: transfer]\n{"error":{"code":"INSUFFICIENT_FUNDS","message":"balance 120 < 500"}}');
    expect(bob).toContain('## Tool call to simulate\n{"name":"balance","arguments":{"account":"Bob"}}');
  });

  it("counts a real failure predicted as a success as missed, and records without `failed` in no failure figure", () => {
    const record = { tool: "buy", answer: "model", exact: false, keys: false } as const;
    const report = aggregateFidelity([
      { ...record, status: false, failed: true }, // failed for real, predicted to succeed
      { ...record, status: true, failed: true }, // failed, predicted to fail
      { ...record, status: false, failed: false }, // succeeded, predicted to fail
      { ...record, status: true }, // an older record: no failure figure
    ]);
    expect(report.overall).toMatchObject({ compared: 4, status: 2, failures: 2, failuresPredicted: 1, failureRecall: 0.5 });
  });

  it("keeps a tool named `__proto__` (a name the model or the records give) in the per-tool figures", () => {
    const report = aggregateFidelity([{ tool: "__proto__", answer: "model", exact: true, keys: true, status: true }]);
    expect(Object.keys(report.tools)).toEqual(["__proto__"]);
    expect(JSON.stringify(report.tools)).toBe(
      '{"__proto__":{"compared":1,"exact":1,"keys":1,"status":1,"unreadable":0,"refused":0,"failures":0,"failuresPredicted":0,"exactRate":1,"keysRate":1,"statusRate":1,"failureRecall":null}}',
    );
  });

  it("reports null rates when nothing was compared", () => {
    expect(aggregateFidelity([]).overall).toMatchObject({ compared: 0, exactRate: null, keysRate: null, statusRate: null, failureRecall: null });
  });
});
