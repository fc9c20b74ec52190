// Reward: each rollout scored from its trajectory.
import { verdictsOf } from "@envace/grpo";
import type { RewardVerdict, Task, Trajectory } from "@envace/protocol";
import type { Domain } from "./setup/domain.js";

/** Each rollout's reward, computed from the trajectory (replayed, never run against a live environment). */
export async function rewards(
  { reward }: Pick<Domain, "reward">,
  tasks: readonly Task[],
  trajectories: readonly Trajectory[],
): Promise<Map<string, RewardVerdict>> {
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const scored = await Promise.all(
    // A rollout masked while it unfolded (its gate's judge failed) stays masked: never scored.
    trajectories.map(async (trajectory) => ({
      ...trajectory,
      reward: trajectory.reward?.status === "masked" ? trajectory.reward : await reward(trajectory, byId.get(trajectory.taskId)!),
    })),
  );
  return verdictsOf(scored);
}
