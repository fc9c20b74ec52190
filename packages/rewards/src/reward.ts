import type { JsonValue, RewardVerdict, Task, Trajectory } from "@envace/protocol";

/**
 * What an evaluator may need beyond the trajectory and the task. Everything is optional: an
 * evaluator that needs a field the caller did not supply rejects with a message naming it.
 */
export interface RewardContext {
  /** The environment's state when the rollout ended (`Environment.state()`), for state matching. */
  state?: JsonValue;
  /** Cancels outstanding work (judge calls); a cancelled evaluation rejects, it is never scored. */
  signal?: AbortSignal;
}

/**
 * Turns a finished rollout into a reward, or into an explicit `masked` verdict when it cannot be
 * scored (the judge was unreachable, say). Bench adapters, the checklist judge and the trainer
 * all speak this one shape, so evaluators compose and plug in uniformly.
 */
export type RewardFunction = (trajectory: Trajectory, task: Task, context?: RewardContext) => Promise<RewardVerdict>;

/** A scored verdict. */
export function scored(value: number, components?: Record<string, number>): RewardVerdict {
  return components ? { status: "scored", value, components } : { status: "scored", value };
}

/** A verdict that excludes the rollout from advantages. Never a 0. */
export function masked(reason: string): RewardVerdict {
  return { status: "masked", reason };
}
