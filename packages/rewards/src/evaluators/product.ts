import { EnvaceError } from "@envace/errors";
import type { Task, TerminationReason } from "@envace/protocol";
import { masked, type RewardContext, type RewardFunction, scored } from "../reward.js";

/** A reward configuration that names a component no evaluator computes. */
export class RewardConfigError extends EnvaceError {
  override readonly code = "reward-config";
}

export interface ProductRewardOptions {
  /**
   * The components that apply to a task (its reward basis, as τ²-bench's `reward_basis`). Default:
   * every component. Naming a component that does not exist rejects: it is a task or
   * configuration error, not a failed rollout.
   */
  basis?: (task: Task) => readonly string[] | undefined;
  /**
   * Rollouts that ended any other way score 0 without evaluating anything (τ²-bench scores
   * only `agent_stop` and `user_stop`). Default: every ending is evaluated.
   */
  scoreOnly?: readonly TerminationReason[];
}

/**
 * A reward that is the product of component rewards over the task's reward basis, τ² style. The
 * components run concurrently; if any is masked the product is masked (never a guess), and the
 * verdict's `components` keep each component's value (and its own components, as `name.sub`).
 */
export function productReward(components: Readonly<Record<string, RewardFunction>>, options: ProductRewardOptions = {}): RewardFunction {
  return async (trajectory, task, context?: RewardContext) => {
    if (options.scoreOnly && !options.scoreOnly.includes(trajectory.termination.reason)) {
      return scored(0, { terminated: 0 });
    }
    const names = options.basis?.(task) ?? Object.keys(components);
    const unknown = names.filter((name) => !Object.hasOwn(components, name));
    if (unknown.length > 0) {
      throw new RewardConfigError(`task "${task.id}": reward basis names ${unknown.map((n) => `"${n}"`).join(", ")}, which no component computes`);
    }
    const verdicts = await Promise.all(names.map((name) => components[name]!(trajectory, task, context)));
    const maskedReasons = verdicts.flatMap((v, i) => (v.status === "masked" ? [`${names[i]}: ${v.reason}`] : []));
    if (maskedReasons.length > 0) return masked(maskedReasons.join("; "));
    let value = 1;
    const parts = Object.create(null) as Record<string, number>;
    verdicts.forEach((verdict, i) => {
      if (verdict.status !== "scored") return;
      value *= verdict.value;
      parts[names[i]!] = verdict.value;
      for (const [sub, v] of Object.entries(verdict.components ?? {})) if (sub !== names[i]) parts[`${names[i]}.${sub}`] = v;
    });
    return scored(value, parts);
  };
}
