import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import type { PredictedFailure } from "./attempt.js";
import { commit, rehearseThenCommit } from "./commit.js";
import { defaultGateNote } from "./gate.js";
import { buildMemory } from "./memory.js";
import { assessment, call, memory, recording, RecordingBank, result, task } from "./testing/bank.js";
import { tokenCounter } from "./tokens.js";

const transfer500 = call("transfer", { to: "Bob", amount: 500 });
const checkBalance = call("balance", { account: "me" });
const NOTE = [
  "Before this is carried out: in your private rehearsal of this task, this call failed:",
  '- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500)',
  "It has not been made. Decide again: make a call that will work (for example, look up what is missing first) or tell the user why it cannot be done.",
].join("\n");

/** The paper's case study: rehearsal predicts the write fails; the committed step reads instead. */
function caseStudy(committedActs: string[]) {
  return recording(
    ScriptedPolicy.queues("scripted", {
      act: [transfer500, "I could not send it.", ...committedActs],
      rehearse: [result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } })],
      reflect: [assessment({ reached_goal: false, went_wrong: "the transfer fails", revision: "check the balance" })],
      summarize: [memory({ plan: "Check the balance." })],
    }),
  );
}

describe("safe-write gating", () => {
  it("shows a committed step that repeats a predicted failing write the prediction, and it reads instead", async () => {
    const policy = caseStudy([transfer500, checkBalance, "Your balance is 120: 500 is too much."]);
    const bank = new RecordingBank();
    const episode = await rehearseThenCommit({ task, policy, environment: bank, setting: "parallel:1", safeWrites: true });
    expect(bank.calls.map((c) => c.name)).toEqual(["balance"]);
    expect(episode.committed.gate).toEqual([
      {
        turn: 1,
        flagged: [{ name: "transfer", arguments: { to: "Bob", amount: 500 }, code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" }],
        proposed: transfer500,
        revised: checkBalance,
        changed: true,
      },
    ]);
    const [proposal, revision] = policy.requests.filter((r) => r.role === "act").slice(2, 4);
    expect(revision!.messages).toEqual([...proposal!.messages, { role: "user", content: NOTE }]);
    // The note belongs to that one request: the conversation goes on without it.
    const next = policy.requests.filter((r) => r.role === "act")[4]!;
    expect(next.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(episode.committed.usage.act?.generations).toBe(3);
  });

  it("is off by default: the failing write reaches the environment", async () => {
    const policy = caseStudy([transfer500, "It failed."]);
    const bank = new RecordingBank();
    const episode = await rehearseThenCommit({ task, policy, environment: bank, setting: "parallel:1" });
    expect(bank.calls.map((c) => c.name)).toEqual(["transfer"]);
    expect(episode.committed.gate).toEqual([]);
  });

  it("asks once per turn and lets an insisting agent go ahead", async () => {
    const policy = caseStudy([transfer500, transfer500, "It failed."]);
    const bank = new RecordingBank();
    const episode = await rehearseThenCommit({ task, policy, environment: bank, setting: "parallel:1", safeWrites: true });
    expect(bank.calls.map((c) => c.name)).toEqual(["transfer"]);
    expect(episode.committed.gate.map((e) => e.changed)).toEqual([false]);
    expect(policy.requests.filter((r) => r.role === "act")).toHaveLength(5);
  });

  const prediction = (name: string, args: Record<string, string | number>, write: boolean): PredictedFailure => ({
    name,
    arguments: args,
    code: "X",
    message: "",
    write,
    source: "model",
    failedIn: [0],
    succeededIn: [],
  });
  const memoryOf = (failures: PredictedFailure[]) =>
    buildMemory({ summary: { plan: "", lessons: [], source: "policy" }, predictedFailures: failures, attempts: 1, counter: tokenCounter() });

  it("matches calls exactly (name and arguments, in any key order) and gates writes only unless asked", async () => {
    const run = async (failures: PredictedFailure[], acts: string[], writesOnly?: boolean) => {
      const bank = new RecordingBank();
      const committed = await commit({
        task,
        policy: ScriptedPolicy.queues("p", { act: acts }),
        environment: bank,
        memory: memoryOf(failures),
        safeWrites: writesOnly === undefined ? true : { writesOnly },
      });
      return { bank, committed };
    };
    const other = await run([prediction("transfer", { amount: 400, to: "Bob" }, true)], [transfer500, "ok"]);
    expect(other.committed.gate).toEqual([]);
    const reordered = await run([prediction("transfer", { amount: 500, to: "Bob" }, true)], [transfer500, checkBalance, "ok"]);
    expect(reordered.committed.gate).toHaveLength(1);
    const read = await run([prediction("balance", { account: "me" }, false)], [checkBalance, "ok"]);
    expect(read.committed.gate).toEqual([]);
    const readGated = await run([prediction("balance", { account: "me" }, false)], [checkBalance, "Let me just answer.", "ok"], false);
    expect(readGated.committed.gate.map((e) => e.flagged[0]?.name)).toEqual(["balance"]);
    expect(readGated.bank.calls).toEqual([]);
  });

  it("writes the note from the prediction", () => {
    expect(defaultGateNote([{ name: "pay", arguments: { b: 1, a: 2 }, code: "LOW_BALANCE", message: "" }])).toContain('- pay {"a":2,"b":1}: LOW_BALANCE\n');
  });
});
