import type { ActStep, JsonObject, Step, Task, Termination, ToolError, ToolOutcome, ToolResult, Trajectory } from "@envace/protocol";
import { REHEARSE_TRUNCATED_DETAIL } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { consistentReward, scoreConsistency } from "./consistent.js";
import { generateTasks } from "./generate.js";
import { goldTrajectory } from "./gold.js";
import { builtinMeta } from "./meta.js";

const tasks = generateTasks({ seed: 5, count: 60, split: "test" });
const okBuy = generateTasks({ seed: 5, count: 200, split: "train", families: ["buy"], failureRate: 0 })[0]!;
const okSwap = generateTasks({ seed: 5, count: 200, split: "train", families: ["swap"], failureRate: 0 })[0]!;
const okPay = generateTasks({ seed: 5, count: 200, split: "train", families: ["pay"], failureRate: 0 })[0]!;

/** The gold rollout with the answer of call `name` replaced, as a rehearsal might have imagined it. */
function withAnswer(task: Task, name: string, answer: { content: JsonObject } | { error: ToolError }): Trajectory {
  const { trajectory } = goldTrajectory(task);
  const steps = trajectory.steps.map((step): Step => {
    if (step.type !== "act") return step;
    const outcomes = step.outcomes.map((o): ToolOutcome => {
      if (o.call.name !== name) return o;
      const result: ToolResult =
        "error" in answer
          ? { status: "error", callId: o.call.id, name, error: answer.error }
          : { status: "ok", callId: o.call.id, name, content: answer.content };
      return { provenance: "rehearsed", call: o.call, result };
    });
    return { ...step, outcomes };
  });
  return { ...trajectory, steps };
}

/** Replace the rollout's final reply and drop the Act steps whose call is named in `drop`. */
function edit(trajectory: Trajectory, reply: string, drop: readonly string[] = []): Trajectory {
  const steps = trajectory.steps.filter((step) => step.type !== "act" || !step.outcomes.some((o) => drop.includes(o.call.name)));
  const last = steps.at(-1) as ActStep;
  const replyStep: ActStep = { ...last, message: { role: "assistant", content: reply }, outcomes: [] };
  return { ...trajectory, steps: [...steps.slice(0, -1), replyStep] };
}

/** The gold rollout cut at its `pay` call, whose rehearsed answer ended the rollout with `termination`. */
function brokenOffAtPay(termination: Termination): Trajectory {
  const { trajectory } = goldTrajectory(okPay);
  const at = trajectory.steps.findIndex((step) => step.type === "act" && step.outcomes.some((o) => o.call.name === "pay"));
  const cut = withAnswer(okPay, "pay", { error: { code: "JSON_DECODE_ERROR", message: "the rehearsed answer is not JSON" } });
  return { ...cut, steps: cut.steps.slice(0, at + 1), termination };
}

describe("scoreConsistency", () => {
  it("scores every gold rollout 1: with real answers it is the outcome check", () => {
    for (const task of tasks) expect(scoreConsistency(task, goldTrajectory(task).trajectory)).toMatchObject({ status: "scored", value: 1 });
  });

  it("rewards acting on the answers the rollout saw, not on the hidden world", () => {
    const { item } = builtinMeta(okBuy).request as { item: string };
    // The rehearsed item lookup says the item is locked. In that world the right move is not to buy.
    const locked = withAnswer(okBuy, "item", { content: { price: 3, stock: 9, locked: true } });
    expect(scoreConsistency(okBuy, locked)).toMatchObject({ value: 0, components: { writes: 0 } });
    const refused = edit(locked, `Sorry, ${item} is locked, so I did not buy it.`, ["buy"]);
    expect(scoreConsistency(okBuy, refused)).toMatchObject({ value: 1, components: { calls: 1, writes: 1, info: 1 } });
    // Refusing without saying why fails the reply check only.
    expect(scoreConsistency(okBuy, edit(locked, "Sorry.", ["buy"]))).toMatchObject({ value: 0, components: { writes: 1, info: 0 } });
  });

  it("checks the reply against the rehearsed write's answer", () => {
    // The gold reply names the real new order; an imagined buy that returned o9 calls for "o9".
    const imagined = withAnswer(okBuy, "buy", { content: { order: "o9", cost: 1, balance: 1 } });
    expect(scoreConsistency(okBuy, imagined)).toMatchObject({ value: 0, components: { writes: 1, info: 0 } });
    expect(scoreConsistency(okBuy, edit(imagined, "Done: order o9."))).toMatchObject({ value: 1 });
  });

  it("scores 0 when the agent skipped a call the task needs", () => {
    const { trajectory } = goldTrajectory(okSwap);
    const skipped = { ...trajectory, steps: trajectory.steps.filter((s) => s.type !== "act" || s.outcomes[0]?.call.name !== "order") };
    expect(scoreConsistency(okSwap, skipped)).toMatchObject({ status: "scored", value: 0, components: { calls: 0 } });
  });

  it("masks a rollout that broke off on a Rehearse output it could not read, and scores the Act role's own breakage", () => {
    // Without the mask this rollout scores 0 (no reply states the payment), which would teach the
    // agent to avoid the write whose imagined answer came out garbled.
    const malformed = brokenOffAtPay({ reason: "env_error", code: "JSON_DECODE_ERROR", detail: "x" });
    expect(scoreConsistency(okPay, malformed)).toEqual({ status: "masked", reason: "the rollout broke off on a Rehearse output that could not be read" });
    const cutOff = brokenOffAtPay({ reason: "max_tokens", limit: 64, detail: REHEARSE_TRUNCATED_DETAIL });
    expect(scoreConsistency(okPay, cutOff)).toMatchObject({ status: "masked" });
    // An Act output that could not be read is the agent's own: scored.
    const actBroke = brokenOffAtPay({ reason: "parse_error", code: "JSON_DECODE_ERROR", detail: "x" });
    expect(scoreConsistency(okPay, actBroke)).toMatchObject({ status: "scored", value: 0, components: { info: 0 } });
  });

  it("masks a rollout whose answers describe no solvable world", async () => {
    const gone = withAnswer(okSwap, "user", { error: { code: "NOT_FOUND", message: "no user" } });
    expect(scoreConsistency(okSwap, gone)).toMatchObject({ status: "masked" });
    const garbled = withAnswer(okSwap, "order", { content: { note: "no state here" } });
    expect(await consistentReward(garbled, okSwap)).toMatchObject({ status: "masked" });
  });
});
