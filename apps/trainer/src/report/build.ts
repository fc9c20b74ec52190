import type { MetricsRecord } from "../run/metrics-log.js";
import type { Chart, HistogramChart, LineChart, ReportData, RunData, RunRow, Series } from "./model.js";
import { numberAt, seriesOf } from "./model.js";
import { explorerOf, viewId } from "./explorer.js";
import { formatInterval } from "./stats.js";

const ROLES = ["act", "rehearse"] as const;

/** Line chart of several metric paths of one record kind, one series per run and path. */
function lineChart(
  runs: readonly RunData[],
  id: string,
  title: string,
  yLabel: string,
  kind: string,
  paths: readonly { path: string; label: string }[],
): LineChart {
  const series: Series[] = [];
  for (const run of runs) {
    for (const { path, label } of paths) {
      const points = seriesOf(run.records, kind, path);
      if (points.length > 0) series.push({ label: runs.length > 1 ? `${run.name} · ${label}` : label, points });
    }
  }
  return { type: "line", id, title, yLabel, series };
}

/** The rehearsal settings a run was evaluated with, sorted. */
function variantsOf(run: RunData): string[] {
  return [...new Set(run.records.filter((r) => r.kind === "eval").map((r) => variantOf(r)))].sort();
}

/** Eval curves: one series per run and rehearsal setting, with its 95% interval band. */
function evalChart(runs: readonly RunData[]): LineChart {
  const series: Series[] = [];
  for (const run of runs) {
    for (const variant of variantsOf(run)) {
      const ofVariant = (r: MetricsRecord) => r.kind === "eval" && variantOf(r) === variant;
      const points = seriesOf(run.records, "eval", "success_rate", ofVariant);
      const band = run.records
        .filter(ofVariant)
        .flatMap((r): [number, number, number][] => {
          const ci = ci95Of(r);
          return ci ? [[r.step, ci[0], ci[1]]] : [];
        })
        .sort((a, b) => a[0] - b[0]);
      const label = `rehearsal ${variant}`;
      series.push({ label: runs.length > 1 ? `${run.name} · ${label}` : label, points, ...(band.length > 0 ? { band } : {}) });
    }
  }
  return { type: "line", id: "eval", title: "Held-out success rate (real environment, 95% interval)", yLabel: "success rate", series };
}

/** Rehearsal fidelity at each evaluation: how often a rehearsed result matched the real one. */
function fidelityChart(runs: readonly RunData[]): LineChart {
  const measures = [
    { path: "fidelity.exact", label: "exact" },
    { path: "fidelity.keys", label: "same keys" },
    { path: "fidelity.status", label: "same status" },
    // Of the real calls that failed, the share predicted to fail (eval records since it was kept).
    { path: "fidelity.failure_recall", label: "failures predicted" },
  ];
  const series: Series[] = [];
  for (const run of runs) {
    for (const variant of variantsOf(run)) {
      for (const { path, label } of measures) {
        const points = seriesOf(run.records, "eval", path, (r) => variantOf(r) === variant);
        const name = `${label} (rehearsal ${variant})`;
        if (points.length > 0) series.push({ label: runs.length > 1 ? `${run.name} · ${name}` : name, points });
      }
    }
  }
  return { type: "line", id: "fidelity", title: "Rehearsal fidelity against the real environment", yLabel: "rate", series };
}

/** Advantage histogram per role, summed over every training step. */
function advantageChart(runs: readonly RunData[]): HistogramChart {
  let edges: number[] = [];
  const series: { label: string; counts: number[] }[] = [];
  for (const run of runs) {
    for (const role of ROLES) {
      let counts: number[] | undefined;
      for (const record of run.records) {
        const hist = record.kind === "train" ? (record.advantage_hist as Record<string, unknown> | undefined) : undefined;
        const roleCounts = hist?.[role];
        if (!hist || !Array.isArray(hist.edges) || !Array.isArray(roleCounts)) continue;
        edges = hist.edges as number[];
        counts ??= new Array<number>(roleCounts.length).fill(0);
        (roleCounts as number[]).forEach((c, i) => (counts![i] = (counts![i] ?? 0) + c));
      }
      if (counts) series.push({ label: runs.length > 1 ? `${run.name} · ${role}` : role, counts });
    }
  }
  return { type: "histogram", id: "advantages", title: "Advantage distribution per role (all steps)", edges, series };
}

/** The rehearsal setting an eval record was measured with (`none`, `parallel:2`, …). */
function variantOf(record: MetricsRecord): string {
  return typeof record.rehearsal === "string" ? record.rehearsal : "none";
}

function label(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "–";
}

function last(records: readonly MetricsRecord[], predicate: (r: MetricsRecord) => boolean): MetricsRecord | undefined {
  return [...records].reverse().find(predicate);
}

function format(value: number | undefined, digits = 3): string {
  return value === undefined ? "–" : value.toFixed(digits);
}

/** A final success rate with its 95% interval when the record has one (`0.234 [0.170, 0.313]`). */
function successCell(record: MetricsRecord | undefined): string {
  const rate = record && numberAt(record, "success_rate");
  if (rate === undefined) return "–";
  const ci = ci95Of(record!);
  return ci ? formatInterval({ rate, low: ci[0], high: ci[1] }) : format(rate);
}

/** An eval record's 95% interval of the success rate, when it carries one. */
function ci95Of(record: MetricsRecord): [number, number] | undefined {
  const ci = record.success_ci95;
  return Array.isArray(ci) && Number.isFinite(ci[0]) && Number.isFinite(ci[1]) ? [ci[0] as number, ci[1] as number] : undefined;
}

/** The side-by-side table: one row per run. */
function table(runs: readonly RunData[]): { columns: string[]; rows: RunRow[] } {
  const variants = new Set<string>();
  for (const run of runs) for (const r of run.records) if (r.kind === "eval") variants.add(variantOf(r));
  const evalColumns = [...variants].sort().map((v) => `success (rehearsal ${v})`);
  const columns = ["mode", "environment", "steps", ...evalColumns, "env calls in training", "parse errors", "wall time (s)"];
  const rows = runs.map((run) => {
    const train = run.records.filter((r) => r.kind === "train");
    const cells: Record<string, string> = {
      mode: label(run.config.mode),
      environment: label(run.config.environment),
      steps: String(train.length),
      "env calls in training": String(train.reduce((sum, r) => sum + (numberAt(r, "env_calls") ?? 0), 0)),
      "parse errors": String(train.reduce((sum, r) => sum + (numberAt(r, "parse_errors.total") ?? 0), 0)),
      "wall time (s)": format(numberAt(last(run.records, () => true) ?? { kind: "", step: 0 }, "elapsed_s"), 0),
    };
    const links = Object.create(null) as Record<string, string>;
    const keptViews = new Set((run.kept?.eval ?? []).map((r) => viewId("eval", r.step, r.setting)));
    for (const variant of variants) {
      const final = last(run.records, (r) => r.kind === "eval" && variantOf(r) === variant);
      const column = `success (rehearsal ${variant})`;
      cells[column] = successCell(final);
      const view = final && viewId("eval", final.step, variant);
      if (view !== undefined && keptViews.has(view)) links[column] = view;
    }
    return { name: run.name, cells, ...(Object.keys(links).length > 0 ? { links } : {}) };
  });
  return { columns, rows };
}

/** Everything the report page draws, computed from the runs' metrics. */
export function buildReport(runs: readonly RunData[], generatedAt: Date = new Date()): ReportData {
  const charts: Chart[] = [
    lineChart(
      runs,
      "reward",
      "Training reward per role",
      "mean reward",
      "train",
      ROLES.map((role) => ({ path: `reward.${role}`, label: role })),
    ),
    evalChart(runs),
    fidelityChart(runs),
    // Beside it, the Rehearse role's fidelity on the calls hybrid grounding executed for real during training.
    lineChart(runs, "grounding", "Fidelity over training (grounded calls)", "rate", "train", [
      { path: "grounding.exact", label: "exact" },
      { path: "grounding.keys", label: "same keys" },
      { path: "grounding.status", label: "same status" },
      { path: "grounding.failure_recall", label: "failures predicted" },
    ]),
    advantageChart(runs),
    lineChart(
      runs,
      "length",
      "Mean output length per role",
      "tokens",
      "train",
      ROLES.map((role) => ({ path: `length.${role}`, label: role })),
    ),
    lineChart(runs, "loss", "Policy loss", "loss", "train", [{ path: "loss", label: "loss" }]),
    lineChart(runs, "diagnostics", "Clip fraction, KL and entropy", "value", "train", [
      { path: "clip_fraction", label: "clip fraction" },
      { path: "ref_kl", label: "KL to the reference" },
      { path: "sampler_kl", label: "sampler–learner KL" },
      { path: "entropy", label: "entropy" },
    ]),
    lineChart(runs, "sft", "Warm-start SFT loss", "loss", "sft", [
      { path: "loss", label: "loss" },
      ...ROLES.map((role) => ({ path: `loss_${role}`, label: `loss (${role})` })),
    ]),
    {
      ...lineChart(runs, "errors", "Parse errors and environment calls per step", "count", "train", [
        { path: "parse_errors.total", label: "parse errors" },
        { path: "env_calls", label: "environment calls" },
      ]),
      integer: true,
    },
  ];
  const { columns, rows } = table(runs);
  const title = runs.length === 1 ? `EnvACE run ${runs[0]!.name}` : `EnvACE runs: ${runs.map((r) => r.name).join(", ")}`;
  const explorers = runs.map((run) => explorerOf(run.name, run.kept ?? { train: [], eval: [] }));
  return { title, generatedAt: generatedAt.toISOString(), charts: charts.filter((c) => c.series.length > 0), columns, rows, explorers };
}
