import type { Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { checklistReward, scoreChecklist } from "./checklist.js";
import { generateTasks } from "./generate.js";
import { goldTrajectory } from "./gold.js";
import { builtinMeta } from "./meta.js";
import { outcomeReward } from "./verify.js";

const tasks = generateTasks({ seed: 21, count: 40, split: "test" });
const swap = generateTasks({ seed: 21, count: 200, split: "train", families: ["swap"], failureRate: 0 })[0]!;

/** The gold trajectory without its first lookup step. */
function skipFirstLookup(task: Task) {
  const { trajectory } = goldTrajectory(task);
  return { ...trajectory, steps: trajectory.steps.slice(1) };
}

describe("outcomeReward (a rewards RewardFunction)", () => {
  it("checks the final state it is given, for grounded episodes", async () => {
    for (const task of tasks) {
      const { trajectory } = goldTrajectory(task);
      expect(await outcomeReward(trajectory, task, { state: task.expectedState! })).toMatchObject({ value: 1 });
      const untouched = builtinMeta(task).world;
      const failed = builtinMeta(task).outcome !== "ok";
      // A failing task's expected state is its initial world; any other task's is not.
      expect(await outcomeReward(trajectory, task, { state: untouched })).toMatchObject({ value: failed ? 1 : 0 });
    }
  });

  it("replays the calls when it gets no state, as for self-unfolded rollouts", async () => {
    for (const task of tasks) expect(await outcomeReward(goldTrajectory(task).trajectory, task)).toMatchObject({ value: 1 });
  });

  it("rejects, never scores, a task that is not a built-in one", async () => {
    const alien: Task = { ...tasks[0]!, metadata: {} };
    await expect(outcomeReward(goldTrajectory(tasks[0]!).trajectory, alien)).rejects.toThrow(/task metadata \(record builtin-test-21-0\)/);
  });
});

describe("checklistReward (a rewards RewardFunction)", () => {
  it("scores like scoreChecklist, with and without dependence", async () => {
    const skipped = skipFirstLookup(swap);
    expect(await checklistReward()(skipped, swap)).toEqual(scoreChecklist(swap, skipped));
    // Without its first lookup the swap loses read-user (0.1) and, through dependence, the writes (0.4) and the reply (0.3).
    expect(scoreChecklist(swap, skipped)).toMatchObject({ value: expect.closeTo(0.2, 9) as number });
    expect(scoreChecklist(swap, skipped, { dependence: false })).toMatchObject({ value: expect.closeTo(0.9, 9) as number });
    expect(await checklistReward({ dependence: false })(skipped, swap)).toEqual(scoreChecklist(swap, skipped, { dependence: false }));
  });
});
