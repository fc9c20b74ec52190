import type { KeptEvalRecord, KeptTrainRecord } from "../keep/record.js";
import type { MetricsRecord } from "../run/metrics-log.js";
import type { RunExplorer } from "./explorer.js";

/** One run as the report sees it: its name, resolved config and metrics records. */
export interface RunData {
  name: string;
  config: Record<string, unknown>;
  records: readonly MetricsRecord[];
  /** The run's kept rollouts (`rollouts/`), for the trajectory explorer. */
  kept?: { train: readonly KeptTrainRecord[]; eval: readonly KeptEvalRecord[] };
}

/** A line series: y against step for one run and one metric. */
export interface Series {
  label: string;
  points: [number, number][];
  /** A 95% interval around the curve, `[step, low, high]`, where the records carry one. */
  band?: [number, number, number][];
}

export interface LineChart {
  type: "line";
  id: string;
  title: string;
  yLabel: string;
  series: Series[];
  /** The y values are counts: whole-number ticks only. */
  integer?: boolean;
}

/** Bar chart of a histogram: fixed bin edges, a count per bin for each labelled series. */
export interface HistogramChart {
  type: "histogram";
  id: string;
  title: string;
  edges: number[];
  series: { label: string; counts: number[] }[];
}

export type Chart = LineChart | HistogramChart;

export interface RunRow {
  name: string;
  cells: Record<string, string>;
  /** A cell's link into the explorer: the view id (`eval:24:none`) of the evaluation it came from. */
  links?: Record<string, string>;
}

export interface ReportData {
  title: string;
  generatedAt: string;
  charts: Chart[];
  columns: string[];
  rows: RunRow[];
  /** One per run, in the order of `rows`: its kept rollouts as explorer views. */
  explorers: RunExplorer[];
}

/** Read a dotted path (`reward.act`) from a record; undefined unless it is a finite number. */
export function numberAt(record: Readonly<Record<string, unknown>>, path: string): number | undefined {
  let value: unknown = record;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The points of `path` over the records of one kind (and optionally one variant), sorted by step. */
export function seriesOf(
  records: readonly MetricsRecord[],
  kind: string,
  path: string,
  filter: (record: MetricsRecord) => boolean = () => true,
): [number, number][] {
  const points: [number, number][] = [];
  for (const record of records) {
    if (record.kind !== kind || !filter(record)) continue;
    const y = numberAt(record, path);
    if (y !== undefined) points.push([record.step, y]);
  }
  return points.sort((a, b) => a[0] - b[0]);
}
