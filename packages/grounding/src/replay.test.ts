import { describe, expect, it } from "vitest";
import { GroundingBudget } from "./budget.js";
import { rehearsedCalls, type RehearsedCall } from "./candidates.js";
import { groundStep } from "./ground.js";
import { groundCall, groundingCost } from "./replay.js";
import { fail, Ledger, ok, TASK, trajectory, type CallSpec } from "./testing/ledger.js";

const open = (id = "A1"): CallSpec => ({ name: "open_account", answer: (c) => ok(c, { id }) });
const deposit = (id: string, imagined = 5, logprobs = [-0.5]): CallSpec => ({
  name: "deposit",
  arguments: { id, amount: 5 },
  answer: (c) => ok(c, { balance: imagined }),
  logprobs,
});
const balance = (id: string, logprobs = [-0.5]): CallSpec => ({ name: "balance", arguments: { id }, answer: (c) => ok(c, { balance: 5 }), logprobs });

const last = (calls: RehearsedCall[]): RehearsedCall => calls.at(-1)!;

describe("groundCall", () => {
  it("replays the committed calls on a fresh environment, then makes the call and compares", async () => {
    const ledger = new Ledger();
    const call = last(rehearsedCalls(trajectory("g/0", [[open()], [deposit("A1")]])));
    const grounding = await groundCall(call, TASK, ledger);
    expect(grounding).toMatchObject({ kind: "compared", calls: 2, exact: true, keys: true, status: true, real: { status: "ok", content: { balance: 5 } } });
    expect(ledger.log).toEqual(["open_account {}", 'deposit {"id":"A1","amount":5}']);
    expect(ledger.closed).toBe(1);
    // The imagined balance was 7: same keys, not exact.
    const off = await groundCall(last(rehearsedCalls(trajectory("g/1", [[open()], [deposit("A1", 7)]]))), TASK, new Ledger());
    expect(off).toMatchObject({ kind: "compared", exact: false, keys: true, status: true });
  });

  it("counts a prefix the real world cannot follow (an imagined id) as diverged, without making the call", async () => {
    // The imagined account is ACC-9; the real one is A1, so the deposit to ACC-9 fails for real.
    const ledger = new Ledger();
    const call = last(rehearsedCalls(trajectory("d/0", [[open("ACC-9")], [deposit("ACC-9")], [balance("ACC-9")]])));
    expect(groundingCost(call)).toBe(3);
    const grounding = await groundCall(call, TASK, ledger);
    expect(grounding).toMatchObject({
      kind: "diverged",
      at: 1,
      tool: "deposit",
      imagined: "ok",
      calls: 2,
      real: { status: "error", error: { code: "NOT_FOUND" } },
    });
    expect(ledger.log).toHaveLength(2);
    expect(ledger.closed).toBe(1);
  });

  it("counts an environment that throws, in the prefix or at the call, and closes it", async () => {
    const call = last(rehearsedCalls(trajectory("x/0", [[open()], [deposit("A1")], [balance("A1")]])));
    const inPrefix = new Ledger("deposit");
    expect(await groundCall(call, TASK, inPrefix)).toEqual({ kind: "exception", stage: "prefix", at: 1, message: "deposit: connection reset", calls: 2 });
    expect(inPrefix.closed).toBe(1);
    expect(await groundCall(call, TASK, new Ledger("balance"))).toMatchObject({ kind: "exception", stage: "call", at: 2, calls: 3 });
  });

  it("compares an unreadable output as agreeing on nothing, and a predicted failure by its code", async () => {
    const garbled: CallSpec = { name: "deposit", arguments: { id: "A1", amount: 5 }, answer: (c) => fail(c, "NO_EXECUTION_RESULT", "") };
    const unread = last(rehearsedCalls(trajectory("u/0", [[open()], [garbled]], { reason: "env_error", code: "NO_EXECUTION_RESULT", detail: "" })));
    expect(await groundCall(unread, TASK, new Ledger())).toMatchObject({ kind: "compared", exact: false, keys: false, status: false });
    // Predicted NOT_FOUND for a deposit to an account never opened: right code, other message.
    const missing: CallSpec = { name: "deposit", arguments: { id: "A7", amount: 5 }, answer: (c) => fail(c, "NOT_FOUND", "unknown account") };
    expect(await groundCall(last(rehearsedCalls(trajectory("m/0", [[missing]]))), TASK, new Ledger())).toMatchObject({
      kind: "compared",
      calls: 1,
      exact: false,
      keys: true,
      status: true,
      real: { status: "error" },
    });
  });
});

describe("the budget", () => {
  it("admits calls in priority order while they fit the step's cap and the run's rest", () => {
    const budget = new GroundingBudget({ perStep: 4, perRun: 6 });
    // Costs 3, 1, 2, 5 against 4: 3 and 1 fit; 2 and 5 no longer do.
    expect(budget.admit([3, 1, 2, 5])).toEqual({ admitted: [true, true, false, false], reserved: 4 });
    budget.spend(4);
    // The run has 2 left: a 2 fits, then nothing.
    expect(budget.stepAllowance()).toBe(2);
    expect(budget.admit([3, 2, 1])).toEqual({ admitted: [false, true, false], reserved: 2 });
    expect(new GroundingBudget({ perStep: null, perRun: null }).admit([100, 1000])).toEqual({ admitted: [true, true], reserved: 1100 });
    expect(() => new GroundingBudget({ perStep: 1.5, perRun: null })).toThrow(/perStep/);
  });
});

describe("groundStep", () => {
  // Three rollouts whose rehearsed calls cost 1, 2, 3 (open, deposit, balance) real calls each.
  const rollouts = (prefix: string) =>
    [0, 1, 2].map((r) =>
      trajectory(`${prefix}/${r}`, [[open()], [deposit("A1", 5, [-0.1 * (r + 1)])], [balance("A1", [-1 - r])]], { reason: "agent_stop" }, r),
    );

  it("holds the per-step and per-run caps exactly, counting every real call, prefixes included", async () => {
    const environments: Ledger[] = [];
    const environment = () => {
      const ledger = new Ledger();
      environments.push(ledger);
      return ledger;
    };
    const budget = new GroundingBudget({ perStep: 7, perRun: 10 });
    const step = (prefix: string) =>
      groundStep({ trajectories: rollouts(prefix), task: () => TASK, environment, budget, fraction: 1, select: "uncertain", seed: 1, concurrency: 4 });
    // Uncertain order: the balances (entropy 3, 2, 1; cost 3 each), the opens (0.5; cost 1), the
    // deposits (0.3, 0.2, 0.1; cost 2). Against 7: two balances (6), then one open (7); nothing else fits.
    const first = await step("a");
    const made = () => environments.reduce((sum, e) => sum + e.log.length, 0);
    expect(first.metrics).toMatchObject({ candidates: 9, selected: 9, over_budget: 6, compared: 3, calls: 7, calls_run: 7, exact: 1 });
    expect(made()).toBe(7);
    // The run has 3 left: a balance (3).
    const second = await step("b");
    expect(second.metrics).toMatchObject({ selected: 9, over_budget: 8, compared: 1, calls: 3, calls_run: 10 });
    expect(made()).toBe(10);
    // Nothing left: nothing runs.
    const third = await step("c");
    expect(third.metrics).toMatchObject({ over_budget: 9, compared: 0, calls: 0, calls_run: 10, exact: null });
    expect(made()).toBe(10);
  });

  it("books what a diverged replay really used, and reports it apart from the compared calls", async () => {
    const budget = new GroundingBudget({ perStep: null, perRun: null });
    const imagined = trajectory("i/0", [[open("ACC-9")], [deposit("ACC-9")], [balance("ACC-9")]]);
    const result = await groundStep({
      trajectories: [imagined],
      task: () => TASK,
      environment: () => new Ledger(),
      budget,
      fraction: 1,
      select: "uncertain",
      seed: 1,
    });
    // open: compared (its id differs: keys agree, not exact), deposit: compared against NOT_FOUND,
    // balance: diverged at the deposit after 2 calls. 1 + 2 + 2 calls.
    expect(result.metrics).toMatchObject({
      candidates: 3,
      compared: 2,
      diverged: 1,
      exceptions: 0,
      calls: 5,
      calls_run: 5,
      exact: 0,
      keys: 0.5,
      status: 0.5,
      failures: 1,
      failure_recall: 0,
    });
    expect(budget.usedInRun).toBe(5);
  });
});
