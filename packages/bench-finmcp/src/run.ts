import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConcurrencyLimit } from "@envace/concurrency";
import { InputError, type Environment, type Policy, type SamplingParamsInput } from "@envace/protocol";
import { JsonLinesFile, parseJsonLines, readJsonLines, writeFileAtomically } from "@envace/records";
import type { RehearsalSettingInput } from "@envace/rehearsal";
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
  .refine((p) => isMarkedError(p.error) || p.predicted !== undefined, { error: "needs predicted (the tool names, in order) unless it is marked error", path: ["predicted"] });
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
export function scorePredictions(samples: readonly FinMcpSample[], predictions: readonly FinMcpPrediction[], file: string): { summary: FinMcpSummary; missing: string[] } {
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
    scored.push({ sceneryLevel1: sample.sceneryLevel1, diffLevel: sample.diffLevel, task: sample.task, score: scoreSample(goldToolNames(sample), prediction.predicted!) });
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
  /** Run directory: `entries.jsonl` (one line per sample as it finishes) and `summary.json`. */
  out: string;
  /** Keep the entries already in `out` and run only the samples missing there. */
  resume?: boolean;
  concurrency?: number;
  maxRounds?: number;
  sampling?: SamplingParamsInput;
  /** Private rehearsal before each user turn (`none`, `parallel:N`, `sequential:N`); see `inferSample`. */
  rehearsal?: RehearsalSettingInput;
  memoryBudget?: number | null;
  onEntry?: (entry: FinMcpEntry, done: number, total: number) => void;
  signal?: AbortSignal;
}

/** Run every sample through the model and its tool server, then score the run. */
export async function runFinMcp(options: RunFinMcpOptions): Promise<{ entries: FinMcpEntry[]; summary: FinMcpSummary }> {
  const entriesFile = join(options.out, "entries.jsonl");
  if (existsSync(entriesFile) && options.resume !== true) throw new InputError(`${entriesFile} already holds a run: resume it (--resume) or choose another --out`);
  await mkdir(options.out, { recursive: true });
  // A line cut short by a killed run is dropped (with a warning), so its sample runs again.
  const file = JsonLinesFile.open(entriesFile, FinMcpPrediction);
  const done = new Set(file.records.map((p) => p.id));
  const todo = options.samples.filter((s) => !done.has(s.id));
  const limit = new ConcurrencyLimit(options.concurrency ?? 4);
  const entries: FinMcpEntry[] = [];

  await Promise.all(
    todo.map((sample) =>
      limit.run(async () => {
        const entry = await runOne(sample, options);
        entries.push(entry);
        file.append(entry);
        options.onEntry?.(entry, done.size + entries.length, options.samples.length);
      }, options.signal),
    ),
  );
  // The summary covers this invocation's samples (a resumed run may have used more).
  const ids = new Set(options.samples.map((s) => s.id));
  const recorded = readJsonLines(entriesFile, FinMcpPrediction, { source: "own" }).filter((p) => ids.has(p.id));
  const { summary } = scorePredictions(options.samples, recorded, entriesFile);
  writeFileAtomically(join(options.out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
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
  for (const [title, groups] of [["task", summary.byTask], ["difficulty", summary.byDifficulty], ["scenery L1", summary.bySceneryLevel1]] as const) {
    lines.push(`by ${title}:`);
    for (const [name, group] of Object.entries(groups)) lines.push(line(name, group));
  }
  if (summary.dropped > 0) lines.push(`dropped (error): ${summary.dropped}`);
  return lines.join("\n");
}
