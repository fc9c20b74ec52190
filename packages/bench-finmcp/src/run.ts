import { readFile } from "node:fs/promises";
import { ConcurrencyLimit } from "@envace/concurrency";
import { InputError, type Environment, type Policy, type SamplingParamsInput } from "@envace/protocol";
import { EvalRun, parseJsonLines } from "@envace/records";
import { formatRehearsalSetting, parseRehearsalSetting, type RehearsalSettingInput } from "@envace/rehearsal";
import { z } from "zod";
import { inferSample, type TurnRecord } from "./inference.js";
import { scoreSample, summarize, type FinMcpSummary, type SampleScore, type ScoredSample } from "./metrics.js";
import { goldToolNames, type FinMcpSample } from "./sample.js";

/**
 * A recorded prediction: the sample id, the predicted tool names in order, and `error` when
 * inference failed (any value but null, false or ""), which drops the sample from the metrics.
 * Lines of `entries.jsonl` are such records too, so a run can be re-scored offline.
 */
export const FinMcpPrediction = z
  .object({
    id: z.union([z.string().min(1), z.number()]).transform(String),
    predicted: z.array(z.string()).optional(),
    error: z.unknown().optional(),
  })
  .refine((p) => isMarkedError(p.error) || p.predicted !== undefined, {
    error: "needs predicted (the tool names, in order) unless it is marked error",
    path: ["predicted"],
  });
export type FinMcpPrediction = z.infer<typeof FinMcpPrediction>;

function isMarkedError(error: unknown): boolean {
  return error !== undefined && error !== null && error !== false && error !== "";
}

/** One line of `entries.jsonl`. */
export interface FinMcpEntry {
  id: string;
  scenery: string;
  diff_level: string;
  task: string;
  gold: string[];
  predicted: string[];
  /** Null for a sample whose inference failed (`error`). */
  score: SampleScore | null;
  turns: TurnRecord[];
  error?: string;
}

/** Score recorded predictions against their samples; `file` names the source in errors. */
export function scorePredictions(
  samples: readonly FinMcpSample[],
  predictions: readonly FinMcpPrediction[],
  file: string,
): { summary: FinMcpSummary; missing: string[] } {
  const byId = new Map(samples.map((s) => [s.id, s]));
  const scored: ScoredSample[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  for (const prediction of predictions) {
    const sample = byId.get(prediction.id);
    if (sample === undefined) throw new InputError(`${file}: prediction for sample id ${prediction.id}, which the samples do not hold`);
    if (seen.has(prediction.id)) throw new InputError(`${file}: more than one prediction for sample id ${prediction.id}`);
    seen.add(prediction.id);
    if (isMarkedError(prediction.error)) {
      dropped += 1;
      continue;
    }
    scored.push({
      sceneryLevel1: sample.sceneryLevel1,
      diffLevel: sample.diffLevel,
      task: sample.task,
      score: scoreSample(goldToolNames(sample), prediction.predicted!),
    });
  }
  return { summary: summarize(scored, dropped), missing: samples.filter((s) => !seen.has(s.id)).map((s) => s.id) };
}

/** Read recorded predictions (JSON Lines, every line whole: the user's file) and score them. */
export async function rescoreFile(samples: readonly FinMcpSample[], file: string): Promise<{ summary: FinMcpSummary; missing: string[] }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new InputError(`${file}: cannot read the predictions (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return scorePredictions(samples, parseJsonLines(FinMcpPrediction, text, file, { source: "user" }), file);
}

export interface RunFinMcpOptions {
  samples: readonly FinMcpSample[];
  policy: Policy;
  /** A fresh tool environment for one sample (an `McpEnvironment` allowing `sample.toolNames`). */
  environment: (sample: FinMcpSample) => Environment;
  /**
   * The run directory (`@envace/records`' `EvalRun`): `options.json`, `entries.jsonl` (one line
   * per sample as it finishes) and `summary.json`. A folder made with the same options resumes:
   * samples already there are not run again. One made with other options is refused.
   */
  out: string;
  /** What identifies the model and tool server in `options.json` (e.g. their specs); default the policy's id. */
  describe?: Record<string, unknown>;
  /** The run directory's one-line notices (a resumed run, a torn last line). Default: a process warning. */
  notify?: (line: string) => void;
  concurrency?: number;
  maxRounds?: number;
  sampling?: SamplingParamsInput;
  /** Private rehearsal before each user turn (`none`, `parallel:N`, `sequential:N`); see `inferSample`. */
  rehearsal?: RehearsalSettingInput;
  memoryBudget?: number | null;
  onEntry?: (entry: FinMcpEntry, done: number, total: number) => void;
  signal?: AbortSignal;
}

/** What decides a sample's entry, which a run directory must have been made with to be resumed (the samples asked for may change). */
function runOptions(options: RunFinMcpOptions): Record<string, unknown> {
  return {
    benchmark: "finmcp",
    policy: options.policy.id,
    ...options.describe,
    maxRounds: options.maxRounds,
    sampling: options.sampling,
    rehearsal: options.rehearsal === undefined ? undefined : formatRehearsalSetting(parseRehearsalSetting(options.rehearsal)),
    memoryBudget: options.memoryBudget ?? undefined,
  };
}

/** Run every sample through the model and its tool server, then score the run. */
export async function runFinMcp(options: RunFinMcpOptions): Promise<{ entries: FinMcpEntry[]; summary: FinMcpSummary }> {
  // Entries are read back as predictions: their lines can be scored again offline.
  const run = EvalRun.open<typeof FinMcpPrediction, FinMcpEntry>({
    out: options.out,
    options: runOptions(options),
    entry: FinMcpPrediction,
    key: (p) => p.id,
    notify: options.notify,
  });
  const pending = new Set(run.start(options.samples.map((s) => s.id)));
  const todo = options.samples.filter((s) => pending.has(s.id));
  const limit = new ConcurrencyLimit(options.concurrency ?? 4);
  const entries: FinMcpEntry[] = [];
  const already = options.samples.length - todo.length;

  await Promise.all(
    todo.map((sample) =>
      limit.run(async () => {
        const entry = await runOne(sample, options);
        entries.push(entry);
        run.append(entry);
        options.onEntry?.(entry, already + entries.length, options.samples.length);
      }, options.signal),
    ),
  );
  // The summary covers this invocation's samples (the run directory may hold more).
  const recorded = [...options.samples.flatMap((s) => run.done.get(s.id) ?? []), ...entries.map((e) => FinMcpPrediction.parse(e))];
  const { summary } = scorePredictions(options.samples, recorded, run.entriesFile);
  run.writeSummary(summary);
  const order = new Map(options.samples.map((s, i) => [s.id, i]));
  return { entries: entries.sort((a, b) => order.get(a.id)! - order.get(b.id)!), summary };
}

async function runOne(sample: FinMcpSample, options: RunFinMcpOptions): Promise<FinMcpEntry> {
  const base = { id: sample.id, scenery: sample.scenery, diff_level: sample.diffLevel, task: sample.task, gold: goldToolNames(sample) };
  let turns: TurnRecord[];
  try {
    turns = await inferSample({
      sample,
      policy: options.policy,
      environment: options.environment(sample),
      ...(options.maxRounds === undefined ? {} : { maxRounds: options.maxRounds }),
      ...(options.sampling === undefined ? {} : { sampling: options.sampling }),
      ...(options.rehearsal === undefined ? {} : { rehearsal: options.rehearsal }),
      ...(options.memoryBudget === undefined ? {} : { memoryBudget: options.memoryBudget }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    return { ...base, predicted: [], score: null, turns: [], error: error instanceof Error ? error.message : String(error) };
  }
  const predicted = turns.flatMap((turn) => turn.calls.map((call) => call.name));
  return { ...base, predicted, score: scoreSample(base.gold, predicted), turns };
}

/** The summary as a few lines of text. */
export function formatSummary(summary: FinMcpSummary): string {
  const pct = (value: number): string => (100 * value).toFixed(2);
  const line = (name: string, a: FinMcpSummary | FinMcpSummary["byTask"][string]): string =>
    `  ${name.padEnd(12)} n ${String(a.samples).padStart(4)}  macro P ${pct(a.macro.precision).padStart(6)} R ${pct(a.macro.recall).padStart(6)} F1 ${pct(a.macro.f1).padStart(6)}  micro F1 ${pct(a.micro.f1).padStart(6)}  EM ${pct(a.exactMatch).padStart(6)}`;
  const lines = [line("overall", summary)];
  for (const [title, groups] of [
    ["task", summary.byTask],
    ["difficulty", summary.byDifficulty],
    ["scenery L1", summary.bySceneryLevel1],
  ] as const) {
    lines.push(`by ${title}:`);
    for (const [name, group] of Object.entries(groups)) lines.push(line(name, group));
  }
  if (summary.dropped > 0) lines.push(`dropped (error): ${summary.dropped}`);
  return lines.join("\n");
}
