/**
 * The trajectory explorer's data: for each run, one view per training step and per evaluation
 * (step and rehearsal setting), each with a small index of its tasks (ids and the flags the
 * filters read) and its records apart, so the page parses a view's records only when it is opened.
 */
import type { KeptEvalRecord, KeptRecord, KeptTrainRecord } from "../keep/record.js";
import type { Trajectory } from "@envace/protocol";

/** What a filter needs of one task of a view. */
export interface TaskIndex {
  taskId: string;
  /** Rollouts (training) or 1 (evaluation). */
  rollouts: number;
  /** Some rollout succeeded / failed. */
  succeeded: boolean;
  failed: boolean;
  masked: boolean;
  parseErrors: boolean;
}

export interface ViewIndex {
  /** `train:3`, `eval:3:parallel:2`: the link target of the headline table. */
  id: string;
  kind: "train" | "eval";
  step: number;
  /** The rehearsal setting of an evaluation. */
  setting?: string;
  tasks: TaskIndex[];
}

export interface RunExplorer {
  name: string;
  views: ViewIndex[];
  /** Each view's records, in the order of `views`. */
  records: KeptRecord[][];
}

export const viewId = (kind: "train" | "eval", step: number, setting?: string): string =>
  kind === "train" ? `train:${step}` : `eval:${step}:${setting ?? "none"}`;

const SUCCESS = 1 - 1e-9;

function trajectoryFlags(t: Trajectory | null): { succeeded: boolean; parseError: boolean } {
  return {
    succeeded: t?.reward?.status === "scored" && t.reward.value >= SUCCESS,
    parseError: t?.termination.reason === "parse_error",
  };
}

function trainTask(taskId: string, records: readonly KeptTrainRecord[]): TaskIndex {
  const flags = records.map((r) => ({ ...trajectoryFlags(r.trajectory), masked: r.masked !== null }));
  return {
    taskId,
    rollouts: records.length,
    succeeded: flags.some((f) => f.succeeded),
    failed: flags.some((f) => !f.succeeded && !f.masked),
    masked: flags.some((f) => f.masked),
    parseErrors: flags.some((f) => f.parseError),
  };
}

function evalTask(record: KeptEvalRecord): TaskIndex {
  return {
    taskId: record.taskId,
    rollouts: 1,
    succeeded: record.success,
    failed: !record.success,
    masked: record.verdict?.status === "masked",
    parseErrors: [record.committed, ...record.attempts.map((a) => a.trajectory)].some((t) => trajectoryFlags(t).parseError),
  };
}

/** Group a run's kept records into views: training steps in step order, then evaluations by step and setting. */
export function explorerOf(name: string, kept: { train: readonly KeptTrainRecord[]; eval: readonly KeptEvalRecord[] }): RunExplorer {
  const views: ViewIndex[] = [];
  const records: KeptRecord[][] = [];
  const byKey = <R extends KeptRecord>(items: readonly R[], key: (r: R) => string): Map<string, R[]> => {
    const out = new Map<string, R[]>();
    for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
    return out;
  };
  for (const [, ofStep] of [...byKey(kept.train, (r) => String(r.step))].sort((a, b) => a[1][0]!.step - b[1][0]!.step)) {
    const step = ofStep[0]!.step;
    const tasks = [...byKey(ofStep, (r) => r.trajectory.taskId)].map(([taskId, rs]) => trainTask(taskId, rs));
    views.push({ id: viewId("train", step), kind: "train", step, tasks });
    records.push(ofStep);
  }
  const evals = [...byKey(kept.eval, (r) => viewId("eval", r.step, r.setting))].sort(
    (a, b) => a[1][0]!.step - b[1][0]!.step || a[1][0]!.setting.localeCompare(b[1][0]!.setting),
  );
  for (const [id, ofView] of evals) {
    views.push({ id, kind: "eval", step: ofView[0]!.step, setting: ofView[0]!.setting, tasks: ofView.map(evalTask) });
    records.push(ofView);
  }
  return { name, views, records };
}
