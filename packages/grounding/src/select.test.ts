import { InputError } from "@envace/protocol";
import { rowsOf } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { answerEntropy, rehearsedCalls } from "./candidates.js";
import { groundedCount, selectCalls } from "./select.js";
import { fail, generation, ok, trajectory, type CallSpec } from "./testing/ledger.js";

const open: CallSpec = { name: "open_account", answer: (c) => ok(c, { id: "A1" }) };
const deposit = (logprobs: number[] | null = [-0.5]): CallSpec => ({
  name: "deposit",
  arguments: { id: "A1", amount: 5 },
  answer: (c) => ok(c, { balance: 5 }),
  logprobs,
});
const balance = (logprobs: number[] | null = [-0.5]): CallSpec => ({
  name: "balance",
  arguments: { id: "A1" },
  answer: (c) => ok(c, { balance: 5 }),
  logprobs,
});

describe("rehearsedCalls", () => {
  it("lists the calls the Rehearse role answered, with the row index rowsOf gives and every committed call before each", () => {
    // Generations: act 0, open 1, (refused: none), act 2, deposit 3, act 4 (reply).
    const refused: CallSpec = { name: "balance", answer: (c) => fail(c, "INVALID_ARGUMENTS", "id is required"), refused: true };
    const t = trajectory("t/0", [[open, refused], [deposit()], "reply"]);
    const calls = rehearsedCalls(t);
    expect(calls.map((c) => [c.call.name, c.row, c.step, c.outcome, c.answer])).toEqual([
      ["open_account", 1, 0, 0, "model"],
      ["deposit", 3, 1, 0, "model"],
    ]);
    // The same indices as the training rows of the Rehearse role.
    expect(rowsOf(t, { roles: ["rehearse"] }).map((r) => r.index)).toEqual([1, 3]);
    expect(calls[0]!.prefix).toEqual([]);
    // The refused call is committed too: a replay makes it.
    expect(calls[1]!.prefix.map((p) => [p.side, p.call.name, p.result.status])).toEqual([
      ["agent", "open_account", "ok"],
      ["agent", "balance", "error"],
    ]);
  });

  it("marks the Rehearse output that ended the rollout unread as unreadable", () => {
    const garbled: CallSpec = { name: "deposit", arguments: { id: "A1", amount: 5 }, answer: (c) => fail(c, "NO_EXECUTION_RESULT", "no <execution_result>") };
    const t = trajectory("t/1", [[open], [garbled]], { reason: "env_error", code: "NO_EXECUTION_RESULT", detail: "no <execution_result>" });
    expect(rehearsedCalls(t).map((c) => c.answer)).toEqual(["model", "unreadable"]);
    // A rollout that ended otherwise has no unreadable call.
    expect(rehearsedCalls(trajectory("t/2", [[open], [deposit()]], { reason: "max_turns", limit: 2 })).map((c) => c.answer)).toEqual(["model", "model"]);
  });

  it("measures uncertainty as the mean surprisal of the sampled tokens", () => {
    expect(answerEntropy(generation("rehearse", "x", [-0.5, -1.5]))).toBe(1);
    expect(answerEntropy(generation("rehearse", "x", null))).toBeNull();
  });
});

describe("selectCalls", () => {
  // Five rehearsed calls over two trajectories: open, deposit, balance | open, deposit.
  const candidates = [trajectory("s/0", [[open], [deposit([-0.2])], [balance([-1.5])]]), trajectory("s/1", [[open], [deposit([-0.9])]])].flatMap(
    rehearsedCalls,
  );

  it("selects nothing and draws nothing at fraction 0", () => {
    for (const select of ["uniform", "writes", "uncertain"] as const)
      expect(selectCalls(candidates, { fraction: 0, select, seed: 1, writeTools: [] })).toEqual([]);
  });

  it("grounds f·n calls, rounding at random so the expected share is exactly f", () => {
    expect(groundedCount(0.4, 5, 7)).toBe(2);
    expect(groundedCount(1, 5, 7)).toBe(5);
    // 0.25 of 2 calls: 0 or 1, one half on average.
    const counts = Array.from({ length: 4000 }, (_, seed) => groundedCount(0.25, 2, seed));
    expect(new Set(counts)).toEqual(new Set([0, 1]));
    expect(Math.abs(counts.reduce((a, b) => a + b, 0) / counts.length - 0.5)).toBeLessThan(0.03);
  });

  it("uniform: the same seed the same calls, and every call as likely as any other", () => {
    const pick = (seed: number) => selectCalls(candidates, { fraction: 0.4, select: "uniform", seed }).map((c) => candidates.indexOf(c));
    expect(pick(11)).toEqual(pick(11));
    expect(pick(11)).toHaveLength(2);
    expect([...selectCalls(candidates, { fraction: 1, select: "uniform", seed: 3 })].sort((a, b) => candidates.indexOf(a) - candidates.indexOf(b))).toEqual(
      candidates,
    );
    const times = new Array<number>(5).fill(0);
    for (let seed = 0; seed < 5000; seed++) for (const i of pick(seed)) times[i]! += 1;
    // Each call in 2 of 5 draws: 0.4 of the seeds, binomial sd ≈ 0.007.
    for (const n of times) expect(Math.abs(n / 5000 - 0.4)).toBeLessThan(0.03);
  });

  it("writes: only calls of write tools, never filled up with reads", () => {
    const writes = ["open_account", "deposit"];
    for (let seed = 0; seed < 50; seed++) {
      const chosen = selectCalls(candidates, { fraction: 0.4, select: "writes", seed, writeTools: writes });
      expect(chosen).toHaveLength(2);
      expect(chosen.every((c) => writes.includes(c.call.name))).toBe(true);
    }
    // f·n = 5 calls asked for, 1 write exists: that one alone.
    expect(selectCalls(candidates, { fraction: 1, select: "writes", seed: 1, writeTools: ["balance"] }).map((c) => c.call.name)).toEqual(["balance"]);
    expect(() => selectCalls(candidates, { fraction: 1, select: "writes", seed: 1 })).toThrow(InputError);
  });

  it("uncertain: the highest entropy first, calls without log-probabilities last", () => {
    // Entropies: 0.5, 0.2, 1.5, 0.5, 0.9.
    const names = (fraction: number) => selectCalls(candidates, { fraction, select: "uncertain", seed: 1 }).map((c) => `${c.trajectory.id}:${c.call.name}`);
    expect(names(0.4)).toEqual(["s/0:balance", "s/1:deposit"]);
    // Ties (0.5, 0.5) in trajectory order.
    expect(names(1)).toEqual(["s/0:balance", "s/1:deposit", "s/0:open_account", "s/1:open_account", "s/0:deposit"]);
    const blind = trajectory("b/0", [[open], [deposit(null)], [balance([-0.1])]]);
    expect(selectCalls(rehearsedCalls(blind), { fraction: 1, select: "uncertain", seed: 1 }).map((c) => c.call.name)).toEqual([
      "open_account",
      "balance",
      "deposit",
    ]);
  });

  it("refuses a fraction outside [0, 1]", () => {
    expect(() => selectCalls(candidates, { fraction: 1.5, select: "uniform", seed: 1 })).toThrow(/fraction 1.5/);
  });
});
