// The kept records of a training step and of an evaluated task, from what the loop already holds.
import type { AdvantageBatch } from "@envace/grpo";
import type { RewardVerdict, Trajectory } from "@envace/protocol";
import type { Episode, FidelityComparison } from "@envace/rehearsal";
import { slimTrajectory, type KeptEvalRecord, type KeptTrainRecord, type RoleAdvantages } from "./record.js";

/** The ids of the first `groups` tasks in rollout order: the step's kept groups. */
export function keptTaskIds(trajectories: readonly Trajectory[], groups: number): string[] {
  const ids: string[] = [];
  for (const t of trajectories) {
    if (ids.length >= groups) break;
    if (!ids.includes(t.taskId)) ids.push(t.taskId);
  }
  return ids;
}

export interface StepRollouts {
  step: number;
  trajectories: readonly Trajectory[];
  verdicts: ReadonlyMap<string, RewardVerdict>;
  batch: Pick<AdvantageBatch, "rows" | "dropped" | "masked">;
  /** The memory each rollout started from, by trajectory id (rollout.memory_attempts). */
  memories?: ReadonlyMap<string, string>;
  /** Groups to keep. */
  groups: number;
}

/** The records of the step's first `groups` task groups, one per rollout. */
export function keptTrainRecords(s: StepRollouts): KeptTrainRecord[] {
  if (s.groups <= 0) return [];
  const taskIds = keptTaskIds(s.trajectories, s.groups);
  const kept = s.trajectories.filter((t) => taskIds.includes(t.taskId));
  const ids = new Set(kept.map((t) => t.id));
  // Advantage sums and counts per trajectory and role, over the rows that trained and those dropped with zero advantage.
  const sums = new Map<string, { act: [number, number]; rehearse: [number, number] }>();
  for (const scored of [...s.batch.rows, ...s.batch.dropped]) {
    const { trajectoryId, role } = scored.row;
    if (!ids.has(trajectoryId) || (role !== "act" && role !== "rehearse")) continue;
    const entry = sums.get(trajectoryId) ?? { act: [0, 0], rehearse: [0, 0] };
    entry[role][0] += scored.advantage;
    entry[role][1] += 1;
    sums.set(trajectoryId, entry);
  }
  const masked = new Map(s.batch.masked.map((m) => [m.trajectoryId, m.reason]));
  const meanOf = ([sum, n]: [number, number]): number | null => (n === 0 ? null : sum / n);
  return kept.map((t) => {
    const entry = sums.get(t.id);
    const advantage: RoleAdvantages = entry === undefined ? { act: null, rehearse: null } : { act: meanOf(entry.act), rehearse: meanOf(entry.rehearse) };
    return {
      kind: "train",
      step: s.step,
      group: taskIds.indexOf(t.taskId),
      trajectory: slimTrajectory(t, s.verdicts.get(t.id) ?? t.reward),
      advantage,
      masked: masked.get(t.id) ?? null,
      memory: s.memories?.get(t.id) ?? null,
    };
  });
}

export interface EvaluatedTask {
  step: number;
  setting: string;
  taskId: string;
  success: boolean;
  verdict: RewardVerdict | null;
  episode?: Episode;
  comparisons?: readonly FidelityComparison[];
  error?: string;
}

/** The record of one evaluated task: memory, attempts, committed run, and each real answer with its prediction. */
export function keptEvalRecord(e: EvaluatedTask): KeptEvalRecord {
  const rehearsal = e.episode?.rehearsal;
  return {
    kind: "eval",
    step: e.step,
    setting: e.setting,
    taskId: e.taskId,
    success: e.success,
    verdict: e.verdict,
    memory: rehearsal?.memory.text ?? null,
    attempts: (rehearsal?.attempts ?? []).map((a) => ({
      index: a.index,
      trajectory: slimTrajectory(a.trajectory),
      assessment: { reachedGoal: a.assessment.reachedGoal, wentWrong: a.assessment.wentWrong, revision: a.assessment.revision, source: a.assessment.source },
    })),
    committed: e.episode === undefined ? null : slimTrajectory(e.episode.committed.trajectory, e.verdict ?? undefined),
    predictions: (e.comparisons ?? []).map((c) => ({
      tool: c.tool,
      step: c.step,
      callId: c.callId,
      answer: c.answer,
      real: c.real,
      predicted: c.rehearsed,
      exact: c.exact,
      keys: c.keys,
      status: c.status,
    })),
    ...(e.error === undefined ? {} : { error: e.error }),
  };
}
