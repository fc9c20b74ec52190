/**
 * Kept rollouts: what a run keeps of the trajectories it sampled, one JSON Lines record per
 * trajectory (training) or per evaluated task (evaluation). The trajectories are the protocol's
 * own `Trajectory`, with the bulky per-token data a reader never needs left out: each
 * generation's prompt token ids (the prompt is the trajectory's own history) and its
 * log-probabilities. Output token ids stay, so every turn still carries its token count.
 */
import { RewardVerdict, ToolResult, Trajectory, type Generation, type Step, type ToolOutcome } from "@envace/protocol";
import { z } from "zod";

/** Advantage per trained role of one rollout (mean over its rows of that role); null: the role has no rows. */
export const RoleAdvantages = z.object({ act: z.number().nullable(), rehearse: z.number().nullable() });
export type RoleAdvantages = z.infer<typeof RoleAdvantages>;

/** One kept rollout of a training step. */
export const KeptTrainRecord = z.object({
  kind: z.literal("train"),
  step: z.number().int().nonnegative(),
  /** The task's group among the step's kept groups (0-based). */
  group: z.number().int().nonnegative(),
  trajectory: Trajectory,
  advantage: RoleAdvantages,
  /** Why the rollout was left out of the update; null when it trained. */
  masked: z.string().nullable(),
  /** The rehearsal memory the rollout started from (`rollout.memory_attempts`); null when none. */
  memory: z.string().nullable(),
});
export type KeptTrainRecord = z.infer<typeof KeptTrainRecord>;

/** A real answer of the committed run next to what the Rehearse role predicted from the same history. */
export const KeptPrediction = z.object({
  tool: z.string(),
  /** 0-based index of the committed trajectory's step that made the call. */
  step: z.number().int().nonnegative(),
  callId: z.string(),
  answer: z.enum(["model", "unreadable", "refused"]),
  real: ToolResult,
  predicted: ToolResult.nullable(),
  exact: z.boolean(),
  keys: z.boolean(),
  status: z.boolean(),
});
export type KeptPrediction = z.infer<typeof KeptPrediction>;

/** One rehearsed attempt of an evaluation and the policy's own reading of it. */
export const KeptAttempt = z.object({
  index: z.number().int().nonnegative(),
  trajectory: Trajectory,
  assessment: z.object({ reachedGoal: z.boolean().nullable(), wentWrong: z.string(), revision: z.string(), source: z.enum(["policy", "fallback"]) }),
});
export type KeptAttempt = z.infer<typeof KeptAttempt>;

/** One task of one evaluation: the memory, the rehearsed attempts, the committed run and its predictions. */
export const KeptEvalRecord = z.object({
  kind: z.literal("eval"),
  step: z.number().int().nonnegative(),
  /** The rehearsal setting (`none`, `parallel:2`, …). */
  setting: z.string(),
  taskId: z.string().min(1),
  success: z.boolean(),
  verdict: RewardVerdict.nullable(),
  /** The memory the committed run acted on; null without rehearsal. */
  memory: z.string().nullable(),
  attempts: z.array(KeptAttempt),
  committed: Trajectory.nullable(),
  predictions: z.array(KeptPrediction),
  /** Why the episode could not finish, when it could not. */
  error: z.string().optional(),
});
export type KeptEvalRecord = z.infer<typeof KeptEvalRecord>;

export const KeptRecord = z.discriminatedUnion("kind", [KeptTrainRecord, KeptEvalRecord]);
export type KeptRecord = z.infer<typeof KeptRecord>;

function slim(generation: Generation): Generation {
  return { ...generation, promptTokens: [], logprobs: null };
}

function slimOutcome(outcome: ToolOutcome): ToolOutcome {
  return outcome.provenance === "rehearsed" && outcome.generation !== undefined ? { ...outcome, generation: slim(outcome.generation) } : outcome;
}

function slimStep(step: Step): Step {
  if (step.type === "act") return { ...step, generation: slim(step.generation), outcomes: step.outcomes.map(slimOutcome) };
  const { generation, actions, ...rest } = step;
  return {
    ...rest,
    ...(generation === undefined ? {} : { generation: slim(generation) }),
    ...(actions === undefined
      ? {}
      : {
          actions: actions.map((a) => ({ ...(a.generation === undefined ? {} : { generation: slim(a.generation) }), outcomes: a.outcomes.map(slimOutcome) })),
        }),
  };
}

/** A trajectory as kept on disk: prompt token ids and log-probabilities left out, the rest as it is. */
export function slimTrajectory(trajectory: Trajectory, reward?: RewardVerdict): Trajectory {
  return { ...trajectory, steps: trajectory.steps.map(slimStep), ...(reward === undefined ? {} : { reward }) };
}
