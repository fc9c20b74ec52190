import type { MetricsRecord } from "../run/metrics-log.js";
import { renderTable } from "../text-table.js";
import { formatInterval, pairedDifference, wilsonInterval } from "./stats.js";

/**
 * The lines `envace train` ends with: held-out success at the start of RL (step 0) and after the
 * last step, per rehearsal setting, each with its 95% interval, and the change on the same tasks
 * with a paired-bootstrap interval; then the real-environment calls made while training.
 */
/** A string field of a record, or `fallback`. */
const text = (value: unknown, fallback = ""): string => (typeof value === "string" ? value : fallback);

/** An outcomes string (`"1101"`) as successes per task. */
const bits = (outcomes: string): boolean[] => Array.from({ length: outcomes.length }, (_, i) => outcomes[i] === "1");

export function headlineTable(records: readonly MetricsRecord[], mode: string): string[] {
  const evals = records.filter((r) => r.kind === "eval");
  if (evals.length === 0) return ["no held-out evaluation ran"];
  const last = Math.max(...evals.map((r) => r.step));
  const settings = [...new Set(evals.map((r) => text(r.rehearsal, "none")))];
  const at = (step: number, setting: string) => evals.find((r) => r.step === step && text(r.rehearsal, "none") === setting);
  const cell = (record: MetricsRecord | undefined): string => {
    if (record === undefined) return "–";
    const outcomes = text(record.outcomes);
    const tasks = Number(record.tasks);
    const successes = outcomes.length === tasks ? bits(outcomes).filter(Boolean).length : Math.round(Number(record.success_rate) * tasks);
    return formatInterval(wilsonInterval(successes, tasks));
  };
  const change = (before: MetricsRecord | undefined, after: MetricsRecord | undefined): string => {
    const a = text(before?.outcomes);
    const b = text(after?.outcomes);
    if (before === undefined || after === undefined || a.length === 0 || a.length !== b.length) return "–";
    const diff = pairedDifference(bits(a), bits(b));
    const sign = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
    return `${sign(diff.rate)} [${sign(diff.low)}, ${sign(diff.high)}]`;
  };
  const steps = records.filter((r) => r.kind === "train").length;
  const tasks = Number(evals[0]!.tasks);
  const rows = settings.map((s) => [`rehearsal ${s}`, cell(at(0, s)), cell(at(last, s)), last === 0 ? "–" : change(at(0, s), at(last, s))]);
  const header = ["", "start of RL (step 0)", `after ${steps} ${mode} steps`, "change, same tasks"];
  const calls = records.filter((r) => r.kind === "train").reduce((sum, r) => sum + (typeof r.env_calls === "number" ? r.env_calls : 0), 0);
  return [
    `held-out success on ${tasks} tasks (95% intervals: Wilson; change: paired bootstrap over tasks)`,
    ...renderTable([header, ...rows]).split("\n"),
    `real-environment calls during training: ${calls}`,
  ];
}
