import { ConcurrencyLimit } from "@envace/concurrency";
import type { Environment, Task, Trajectory } from "@envace/protocol";
import type { GroundingBudget } from "./budget.js";
import { rehearsedCalls } from "./candidates.js";
import { groundCall, groundingCost } from "./replay.js";
import { selectCalls, type SelectOptions } from "./select.js";
import { groundingMetrics, type GroundedCall, type GroundingMetrics } from "./uses.js";

export interface GroundStepOptions extends SelectOptions {
  trajectories: readonly Trajectory[];
  /** The task of a trajectory, by id. */
  task: (taskId: string) => Task;
  /** A fresh real environment for one grounding (the caller counts its calls). */
  environment: (task: Task) => Environment;
  budget: GroundingBudget;
  /** Groundings run at once. Default 1. */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface GroundStepResult {
  /** Every admitted grounding, in selection order. */
  grounded: GroundedCall[];
  metrics: GroundingMetrics;
}

/**
 * Ground one training step's rollouts: select calls among the Rehearse role's answers, admit them
 * under the budget, and ground each on its own fresh environment. Admission is decided before any
 * call runs, so what is grounded does not depend on the order groundings finish in.
 */
export async function groundStep(options: GroundStepOptions): Promise<GroundStepResult> {
  const candidates = options.trajectories.flatMap(rehearsedCalls);
  const selected = selectCalls(candidates, options);
  const { admitted } = options.budget.admit(selected.map(groundingCost));
  const chosen = selected.filter((_, i) => admitted[i]);
  const limit = new ConcurrencyLimit(options.concurrency ?? 1);
  const grounded = await Promise.all(
    chosen.map((candidate) =>
      limit.run(async () => {
        const task = options.task(candidate.trajectory.taskId);
        return { candidate, grounding: await groundCall(candidate, task, options.environment(task)) };
      }, options.signal),
    ),
  );
  options.budget.spend(grounded.reduce((sum, g) => sum + g.grounding.calls, 0));
  const counts = { candidates: candidates.length, selected: selected.length, overBudget: selected.length - chosen.length, callsRun: options.budget.usedInRun };
  return { grounded, metrics: groundingMetrics(counts, grounded) };
}
