import { InvariantError } from "@envace/errors";
import { TaskContentError, type Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { masked, type RewardFunction, scored } from "../reward.js";
import { actStep, trajectory, userStep } from "../testing/fixtures.js";
import { actionMatches, actionMatchReward, agentToolCalls, checkActions, pythonEqual } from "./action-match.js";
import { communicateInfoReward, infoCommunicated } from "./communicate-info.js";
import { productReward } from "./product.js";
import { stateHash, stateMatchReward } from "./state-match.js";

const task: Task = { id: "t1", messages: [{ role: "user", content: "Exchange my order" }], tools: [], metadata: {} };
const context = task.messages;

describe("actionMatches (τ²-bench's rule)", () => {
  const gold = { name: "exchange", arguments: { order_id: "#W1", item_ids: ["a", "b"], payment: "gift_card" } };

  it("needs the same name", () => {
    expect(actionMatches(gold, { name: "return", arguments: gold.arguments })).toBe(false);
  });

  it("compares the arguments the call gave when compare_args is absent", () => {
    expect(actionMatches(gold, { name: "exchange", arguments: { payment: "gift_card", item_ids: ["a", "b"], order_id: "#W1" } })).toBe(true);
    expect(actionMatches(gold, { name: "exchange", arguments: { ...gold.arguments, note: "x" } })).toBe(false);
    expect(actionMatches(gold, { name: "exchange", arguments: { ...gold.arguments, item_ids: ["b", "a"] } })).toBe(false);
    // Upstream restricts both sides to the call's own names, so a call that leaves a gold argument out still matches.
    expect(actionMatches(gold, { name: "exchange", arguments: { order_id: "#W1", item_ids: ["a", "b"] } })).toBe(true);
    expect(actionMatches(gold, { name: "exchange", arguments: {} })).toBe(true);
  });

  it("compares only compare_args when given, and nothing when it is empty", () => {
    const loose = { ...gold, compare_args: ["order_id"] };
    expect(actionMatches(loose, { name: "exchange", arguments: { order_id: "#W1", payment: "paypal" } })).toBe(true);
    expect(actionMatches(loose, { name: "exchange", arguments: { order_id: "#W2" } })).toBe(false);
    expect(actionMatches({ ...gold, compare_args: [] }, { name: "exchange", arguments: {} })).toBe(true);
    // A compared name absent on both sides is equal on both sides.
    expect(actionMatches({ ...gold, compare_args: ["order_id", "reason"] }, { name: "exchange", arguments: { order_id: "#W1" } })).toBe(true);
  });

  it("compares values as Python's == does on decoded JSON", () => {
    expect(pythonEqual(true, 1)).toBe(true);
    expect(pythonEqual(false, 0)).toBe(true);
    expect(pythonEqual(1, "1")).toBe(false);
    expect(pythonEqual({ a: [1, { b: null }] }, { a: [true, { b: null }] })).toBe(true);
    expect(pythonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(pythonEqual(null, 0)).toBe(false);
  });
});

describe("actionMatchReward", () => {
  const rollout = trajectory(context, [
    actStep(null, [{ name: "get_order", arguments: { order_id: "#W1" }, result: { status: "delivered" } }]),
    actStep(null, [{ name: "exchange", arguments: { order_id: "#W1" }, result: { error: { code: "INVALID_PARAMETERS", message: "items" } } }]),
    actStep("Done."),
  ]);

  it("collects every call the agent made, rejected ones included", () => {
    expect(agentToolCalls(rollout).map((c) => c.name)).toEqual(["get_order", "exchange"]);
  });

  it("scores 1 when every gold action was performed, else 0", async () => {
    const reward = actionMatchReward();
    expect(await reward(rollout, { ...task, goldActions: [{ id: "g", name: "get_order", arguments: { order_id: "#W1" } }] })).toEqual(scored(1, { action: 1 }));
    expect(
      await reward(rollout, {
        ...task,
        goldActions: [
          { id: "g1", name: "get_order", arguments: { order_id: "#W1" } },
          { id: "g2", name: "exchange", arguments: { order_id: "#W2" } },
        ],
      }),
    ).toEqual(scored(0, { action: 0 }));
  });

  it("takes gold actions with compare_args from the caller", async () => {
    const reward = actionMatchReward({ actions: () => [{ name: "exchange", arguments: { order_id: "#W1", item_ids: ["a"] }, compare_args: ["order_id"] }] });
    expect(await reward(rollout, task)).toMatchObject({ value: 1 });
    expect(checkActions([{ name: "refund", arguments: {} }], agentToolCalls(rollout))).toEqual([{ action: { name: "refund", arguments: {} }, matched: false }]);
  });

  it("scores 1 for an empty list of gold actions and rejects a task without one", async () => {
    expect(await actionMatchReward()(rollout, { ...task, goldActions: [] })).toMatchObject({ value: 1 });
    await expect(actionMatchReward()(rollout, task)).rejects.toThrow('task "t1" has no gold actions to match');
    await expect(actionMatchReward()(rollout, task)).rejects.toBeInstanceOf(TaskContentError);
  });
});

describe("stateMatchReward", () => {
  it("hashes states canonically, whatever their key order", () => {
    expect(stateHash({ users: { u1: { name: "Ada", tags: ["a"] } }, n: 1 })).toBe(stateHash({ n: 1, users: { u1: { tags: ["a"], name: "Ada" } } }));
    expect(stateHash({ n: 1 })).not.toBe(stateHash({ n: 2 }));
    expect(stateHash([1, 2])).not.toBe(stateHash([2, 1]));
  });

  it("scores 1 when the final state hashes like the expected one", async () => {
    const reward = stateMatchReward();
    const rollout = trajectory(context, [actStep("ok")]);
    const expected = { ...task, expectedState: { orders: { "#W1": "exchanged" }, count: 1 } };
    expect(await reward(rollout, expected, { state: { count: 1, orders: { "#W1": "exchanged" } } })).toEqual(scored(1, { state: 1 }));
    expect(await reward(rollout, expected, { state: { count: 1, orders: { "#W1": "delivered" } } })).toEqual(scored(0, { state: 0 }));
  });

  it("rejects when the final or the expected state is missing", async () => {
    const rollout = trajectory(context, [actStep("ok")]);
    await expect(stateMatchReward()(rollout, { ...task, expectedState: {} })).rejects.toThrow("needs the final environment state in context.state");
    await expect(stateMatchReward()(rollout, task, { state: {} })).rejects.toThrow('task "t1" has no expected state');
    // A task without the state is the data's fault; a call without the final state, the calling program's.
    await expect(stateMatchReward()(rollout, task, { state: {} })).rejects.toBeInstanceOf(TaskContentError);
    await expect(stateMatchReward()(rollout, { ...task, expectedState: {} })).rejects.toBeInstanceOf(InvariantError);
  });
});

describe("communicate info (τ²-bench's rule)", () => {
  it("matches lower-cased, with commas removed from the reply only", () => {
    expect(infoCommunicated("1000", ["Your refund is 1,000 USD."])).toBe(true);
    expect(infoCommunicated("Refund", ["your REFUND is on its way"])).toBe(true);
    expect(infoCommunicated("1,000", ["Your refund is 1,000 USD."])).toBe(false);
    expect(infoCommunicated("ada", [])).toBe(false);
  });

  it("scores 1 only when every fact reached the user, and ignores thinking", async () => {
    const rollout = trajectory(context, [
      actStep("<think>the total is 1,234.50 and the id is #W7</think>Your total is 1,234.50."),
      userStep("And the order id?"),
      actStep("It is #w7."),
    ]);
    const reward = communicateInfoReward();
    expect(await reward(rollout, { ...task, metadata: { communicate_info: ["1234.50", "#W7"] } })).toEqual(scored(1, { communicate: 1 }));
    expect(await reward(rollout, { ...task, metadata: { communicate_info: ["1234.50", "tracking"] } })).toEqual(scored(0, { communicate: 0 }));
    const thinkingOnly = trajectory(context, [actStep("<think>the id is #W7</think>Done.")]);
    expect(await reward(thinkingOnly, { ...task, metadata: { communicate_info: ["#W7"] } })).toMatchObject({ value: 0 });
  });

  it("scores 1 for an empty list and rejects a task without one", async () => {
    const rollout = trajectory(context, [actStep("Hi")]);
    expect(await communicateInfoReward()(rollout, { ...task, metadata: { communicate_info: [] } })).toMatchObject({ value: 1 });
    await expect(communicateInfoReward()(rollout, task)).rejects.toThrow('task "t1" has no communicate_info list');
    await expect(communicateInfoReward()(rollout, task)).rejects.toBeInstanceOf(TaskContentError);
  });
});

describe("productReward", () => {
  const fixed =
    (value: number, components?: Record<string, number>): RewardFunction =>
    () =>
      Promise.resolve(scored(value, components));
  const rollout = trajectory(context, [actStep("ok")]);

  it("multiplies the components and keeps each value", async () => {
    const reward = productReward({ db: fixed(1, { db: 1 }), communicate: fixed(0.5), judge: fixed(0.5, { "turn/0": 0.5 }) });
    expect(await reward(rollout, task)).toEqual(scored(0.25, { db: 1, communicate: 0.5, judge: 0.5, "judge.turn/0": 0.5 }));
  });

  it("multiplies only over the task's reward basis, and rejects a basis no component computes", async () => {
    const reward = productReward(
      { DB: fixed(1), COMMUNICATE: fixed(0) },
      { basis: (t) => (Array.isArray(t.metadata.reward_basis) ? (t.metadata.reward_basis as string[]) : undefined) },
    );
    expect(await reward(rollout, { ...task, metadata: { reward_basis: ["DB"] } })).toEqual(scored(1, { DB: 1 }));
    expect(await reward(rollout, task)).toMatchObject({ value: 0 });
    await expect(reward(rollout, { ...task, metadata: { reward_basis: ["DB", "NL_ASSERTION"] } })).rejects.toThrow(
      'reward basis names "NL_ASSERTION", which no component computes',
    );
  });

  it("keeps a component named `__proto__` (a name a task's reward basis may give) in the verdict", async () => {
    const reward = productReward(
      Object.fromEntries([
        ["__proto__", fixed(0.5)],
        ["db", fixed(1)],
      ]),
      {
        basis: (t) => t.metadata.reward_basis as string[],
      },
    );
    const verdict = await reward(rollout, { ...task, metadata: { reward_basis: ["__proto__", "db"] } });
    expect(JSON.stringify(verdict)).toBe('{"status":"scored","value":0.5,"components":{"__proto__":0.5,"db":1}}');
  });

  it("is masked when any component is masked", async () => {
    const reward = productReward({ db: fixed(0), judge: () => Promise.resolve(masked("judge unreachable")) });
    expect(await reward(rollout, task)).toEqual(masked("judge: judge unreachable"));
  });

  it("scores 0 without evaluating a rollout that ended prematurely, when asked to", async () => {
    let evaluated = false;
    const reward = productReward(
      {
        db: () => {
          evaluated = true;
          return Promise.resolve(scored(1));
        },
      },
      { scoreOnly: ["agent_stop", "user_stop"] },
    );
    const cut = trajectory(context, [actStep(null, [], "length")], { reason: "max_turns", limit: 30 });
    expect(await reward(cut, task)).toEqual(scored(0, { terminated: 0 }));
    expect(evaluated).toBe(false);
    expect(await reward(rollout, task)).toEqual(scored(1, { db: 1 }));
  });
});
