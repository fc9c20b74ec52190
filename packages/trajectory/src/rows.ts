import type { Generation, PolicyRole, TrainingRow, Trajectory } from "@envace/protocol";
import { unreadRehearseEnding } from "./rehearse-parser.js";

export interface RowsOptions {
  /**
   * Keep only these roles. In the caller-only baseline the Rehearse role is a frozen simulator:
   * train on `["act"]` only. Default: every policy role.
   */
  roles?: readonly PolicyRole[];
}

/**
 * Every policy generation of a rollout as a training row, in generation order: each Act
 * generation, then the Rehearse generations of its tool calls. `index` is the position among all
 * policy generations of the trajectory (before any role filter). A row is `invalid` when its
 * output ended the rollout as unreadable: the Act output of a `parse_error`, the Rehearse output of
 * an `env_error` with a Rehearse parse code. Simulated-user generations are not the policy's and
 * give no rows.
 */
export function rowsOf(trajectory: Trajectory, options: RowsOptions = {}): TrainingRow[] {
  const generations: Generation[] = [];
  for (const step of trajectory.steps) {
    if (step.type !== "act") continue;
    generations.push(step.generation);
    for (const outcome of step.outcomes) {
      if (outcome.provenance === "rehearsed" && outcome.generation !== undefined) generations.push(outcome.generation);
    }
  }
  const termination = trajectory.termination;
  const lastInvalid = termination.reason === "parse_error" ? "act" : unreadRehearseEnding(termination) === "malformed" ? "rehearse" : undefined;

  const rows: TrainingRow[] = [];
  generations.forEach((generation, index) => {
    const role = generation.role;
    if (role !== "act" && role !== "rehearse" && role !== "reflect" && role !== "summarize") return;
    if (options.roles !== undefined && !options.roles.includes(role)) return;
    rows.push({
      taskId: trajectory.taskId,
      trajectoryId: trajectory.id,
      rollout: trajectory.rollout,
      index,
      role,
      promptTokens: generation.promptTokens,
      outputTokens: generation.outputTokens,
      logprobs: generation.logprobs,
      invalid: index === generations.length - 1 && role === lastInvalid,
    });
  });
  return rows;
}
