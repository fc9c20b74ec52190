// `envace compare --baseline <eval dirs…> --arm <eval dirs…>`: an arm against a baseline, each
// evaluated on the same tasks (one `envace eval builtin` folder a seed), with the paired 95%
// intervals an experiment reports: success, and the Rehearse role's fidelity on real calls.
import { InputError } from "@envace/protocol";
import { optionDifferences, readRun } from "@envace/records";
import { aggregateFidelity } from "@envace/rehearsal";
import { EvaluationEntry } from "../evaluate.js";
import { renderTable } from "../text-table.js";
import { formatInterval, pairedDifference, pairedRatioDifference, pooledRate, wilsonInterval, type RateInterval, type TaskCount } from "../report/stats.js";

/** The options of `envace compare`, as cli.ts declares them. */
export interface CompareOptions {
  baseline: string[];
  arm: string[];
  /** The rehearsal setting compared (`none`, `parallel:2`, …); default `none`. */
  setting: string;
  resamples: number;
  seed: number;
  json?: boolean;
}

/** One compared quantity: each arm's rate, and the paired difference `arm − baseline`. */
export interface ComparedRate {
  metric: string;
  /** The denominator of each arm: tasks for success, probed calls (or real failures) for fidelity. */
  of: { baseline: number; arm: number };
  baseline: RateInterval | null;
  arm: RateInterval | null;
  difference: RateInterval | null;
}

export interface Comparison {
  setting: string;
  pairs: number;
  tasks: number;
  rates: ComparedRate[];
}

/** A task's outcome and its fidelity counts, from one entry. */
interface TaskResult {
  success: boolean;
  exact: TaskCount;
  keys: TaskCount;
  status: TaskCount;
  failureRecall: TaskCount;
}

function taskResult(entry: EvaluationEntry): TaskResult {
  const f = aggregateFidelity(entry.fidelity).overall;
  return {
    success: entry.success,
    exact: { hits: f.exact, of: f.compared },
    keys: { hits: f.keys, of: f.compared },
    status: { hits: f.status, of: f.compared },
    failureRecall: { hits: f.failuresPredicted, of: f.failures },
  };
}

/**
 * The tasks of one evaluation folder at `setting`, by task id. Entries of other settings (memory
 * budgets, write gates) are not this setting's.
 */
function readTasks(dir: string, setting: string): { options: Record<string, unknown>; tasks: Map<string, TaskResult> } {
  const { options, entries } = readRun(dir, EvaluationEntry);
  const tasks = new Map<string, TaskResult>();
  for (const entry of entries) {
    if (entry.setting === setting && entry.memoryBudget === null && !entry.safeWrites) tasks.set(entry.taskId, taskResult(entry));
  }
  if (tasks.size === 0) throw new InputError(`${dir}: no entries of setting ${setting}`);
  return { options, tasks };
}

/**
 * Pair the i-th baseline folder with the i-th arm folder: they must be evaluations of the same
 * tasks with the same options but the policy, and hold the same task ids. Pairs are concatenated
 * (tasks are the unit of resampling), each in task-id order.
 */
export function compareEvaluations(options: Omit<CompareOptions, "json">): Comparison {
  if (options.baseline.length !== options.arm.length) {
    throw new InputError(
      `compare: ${options.baseline.length} baseline folders but ${options.arm.length} arm folders; give one of each per seed, in the same order`,
    );
  }
  const before: TaskResult[] = [];
  const after: TaskResult[] = [];
  options.baseline.forEach((baseDir, i) => {
    const armDir = options.arm[i]!;
    const base = readTasks(baseDir, options.setting);
    const arm = readTasks(armDir, options.setting);
    const differences = optionDifferences({ ...base.options, policy: null }, { ...arm.options, policy: null });
    if (differences.length > 0) throw new InputError(`compare: ${baseDir} and ${armDir} are evaluations with other options (${differences.join(", ")})`);
    const ids = [...base.tasks.keys()].sort();
    const missing = ids.filter((id) => !arm.tasks.has(id));
    const extra = [...arm.tasks.keys()].filter((id) => !base.tasks.has(id));
    if (missing.length > 0 || extra.length > 0) {
      const first = missing[0] ?? extra[0]!;
      throw new InputError(`compare: ${baseDir} and ${armDir} hold different tasks (${missing.length + extra.length} not in both, e.g. ${first})`);
    }
    for (const id of ids) {
      before.push(base.tasks.get(id)!);
      after.push(arm.tasks.get(id)!);
    }
  });

  const bootstrap = { resamples: options.resamples, seed: options.seed };
  const successes = (results: TaskResult[]): boolean[] => results.map((r) => r.success);
  const solved = (results: TaskResult[]): number => results.filter((r) => r.success).length;
  const rates: ComparedRate[] = [
    {
      metric: "success",
      of: { baseline: before.length, arm: after.length },
      baseline: wilsonInterval(solved(before), before.length),
      arm: wilsonInterval(solved(after), after.length),
      difference: pairedDifference(successes(before), successes(after), bootstrap),
    },
  ];
  for (const metric of ["exact", "keys", "status", "failureRecall"] as const) {
    const b = before.map((r) => r[metric]);
    const a = after.map((r) => r[metric]);
    const total = (counts: TaskCount[]): number => counts.reduce((sum, c) => sum + c.of, 0);
    rates.push({
      metric: metric === "failureRecall" ? "failure recall" : `fidelity ${metric}`,
      of: { baseline: total(b), arm: total(a) },
      baseline: pooledRate(b, bootstrap),
      arm: pooledRate(a, bootstrap),
      difference: pairedRatioDifference(b, a, bootstrap),
    });
  }
  return { setting: options.setting, pairs: options.baseline.length, tasks: before.length, rates };
}

/** The comparison as a plain-text table. */
export function formatComparison(comparison: Comparison): string {
  const cell = (r: RateInterval | null, of: number): string => (r === null ? "-" : `${formatInterval(r)} (n ${of})`);
  const signed = (r: RateInterval | null): string => {
    if (r === null) return "-";
    const sign = (x: number): string => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
    return `${sign(r.rate)} [${sign(r.low)}, ${sign(r.high)}]`;
  };
  const table = [
    ["metric", "baseline", "arm", "arm − baseline"],
    ...comparison.rates.map((r) => [r.metric, cell(r.baseline, r.of.baseline), cell(r.arm, r.of.arm), signed(r.difference)]),
  ];
  return [
    `setting ${comparison.setting}: ${comparison.tasks} tasks in ${comparison.pairs} ${comparison.pairs === 1 ? "pair" : "pairs"} of evaluations`,
    renderTable(table),
    "",
    "95% intervals: Wilson for a success rate; percentile bootstrap over tasks for fidelity (a pooled rate: Σ hits / Σ calls) and for every difference, each task's pair kept together. " +
      "n: tasks for success, probed real calls for fidelity, real failures for failure recall.",
  ].join("\n");
}

export function run(options: CompareOptions): Promise<void> {
  const comparison = compareEvaluations(options);
  console.log(options.json === true ? JSON.stringify(comparison, null, 2) : formatComparison(comparison));
  return Promise.resolve();
}
