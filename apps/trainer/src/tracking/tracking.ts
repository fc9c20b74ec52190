// Trackers: every metrics record a run logs also goes, as scalars, to the trackers its config names.
import { join } from "node:path";
import type { MetricsRecord } from "../run/metrics-log.js";
import { EventFileWriter } from "./tfevents.js";

/**
 * The scalars of a metrics record, tagged `<kind>/<path>` (an evaluation's under its rehearsal
 * setting: `eval/none/success_rate`): every finite number at any depth, array items by index
 * (`eval/none/success_ci95/0`). Text, booleans and the step itself are left out.
 */
export function scalarsOf(record: MetricsRecord): [string, number][] {
  const prefix = record.kind === "eval" && typeof record.rehearsal === "string" ? `eval/${record.rehearsal}` : record.kind;
  const out: [string, number][] = [];
  const walk = (value: unknown, path: string): void => {
    if (typeof value === "number") {
      if (Number.isFinite(value)) out.push([path, value]);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${path}/${i}`));
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, `${path}/${key}`);
    }
  };
  for (const [key, value] of Object.entries(record)) if (key !== "step" && key !== "kind") walk(value, `${prefix}/${key}`);
  return out;
}

export type TrackerName = "tensorboard";

/** Where the scalars of each logged record go. */
export interface Tracker {
  record(record: MetricsRecord): void;
}

/** TensorBoard: one event file per process under `<run>/tensorboard/` (`tensorboard --logdir runs/`). */
export class TensorBoardTracker implements Tracker {
  private readonly writer: EventFileWriter;

  constructor(runDir: string) {
    this.writer = new EventFileWriter(join(runDir, "tensorboard"));
  }

  get path(): string {
    return this.writer.path;
  }

  record(record: MetricsRecord): void {
    this.writer.scalars(record.step, scalarsOf(record));
  }
}

const TRACKERS: Record<TrackerName, (runDir: string) => Tracker> = {
  tensorboard: (runDir) => new TensorBoardTracker(runDir),
};

/** The trackers a config names. */
export function openTrackers(names: readonly TrackerName[], runDir: string): Tracker[] {
  return names.map((name) => TRACKERS[name](runDir));
}
