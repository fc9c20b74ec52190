import { pyDumps, PyHashDict, type PyObject } from "@envace/python-text";
import { BfclDataError } from "./errors.js";
import { existsSync, statSync } from "node:fs";
import * as z from "zod";
import { InputError, RecordError } from "@envace/protocol";
import { EvalRun, type JsonLinesFile } from "@envace/records";
import type { Policy, SamplingParamsInput } from "@envace/protocol";
import { categoryOfId, isAgentic, questionFileName } from "./categories.js";
import type { AstCheckOptions } from "./checker/ast.js";
import { countEntries, hasCategory, loadCategory, parsePy, readLines } from "./data.js";
import type { Entry, MultiTurnEntry } from "./data.js";
import { DecodeError, decodeMultiTurnStep } from "./decode.js";
import { inferMultiTurn, inferSingleTurn } from "./inference.js";
import type { InferenceMode } from "./inference.js";
import type { LongContextFiller } from "./multi-turn/environment.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "./multi-turn/checker.js";
import type { MultiTurnCalls } from "./multi-turn/checker.js";
import { defaultLongContextSource, loadLongContextFiller } from "./multi-turn/long-context.js";
import { oracleCalls } from "./oracle.js";
import { parsePyJson } from "./py/json.js";
import { decodeSingleTurnOutput, scoreSingleTurn } from "./score.js";
import type { EntryVerdict } from "./score.js";
import { categoryScore, summarize, summaryTable } from "./summary.js";
import type { CategoryScore, Summary } from "./summary.js";

/** Where the outputs come from. */
export type OutputSource =
  /** Replay the reference answers (a harness self-test). */
  | { readonly kind: "oracle" }
  /** Saved outputs: JSON Lines `{"id", "result"}` in upstream's raw form or as decoded calls. */
  | { readonly kind: "results"; readonly file: string }
  /** Ask a policy. */
  | { readonly kind: "policy"; readonly policy: Policy; readonly mode: InferenceMode; readonly sampling?: SamplingParamsInput; readonly concurrency?: number };

export interface BfclEvalOptions {
  /** An upstream BFCL data folder (`bfcl_eval/data` or a copy). */
  readonly dataDir: string;
  /** Categories to run (see `resolveCategories`). */
  readonly categories: readonly string[];
  readonly source: OutputSource;
  /**
   * The run directory (`@envace/records`' `EvalRun`): `options.json`, `entries.jsonl`,
   * `summary.json`, `summary.md` (and `results.jsonl` for policies). A folder made with the same
   * options resumes: verdicts already in `entries.jsonl` (and a policy's outputs in
   * `results.jsonl`) are kept and only the entries missing there are scored. One made with other
   * options is refused (`RunDirectoryError`).
   */
  readonly outDir: string;
  /** Upstream's `long_context.py`, for `multi_turn_long_context`. Default: found next to the data folder. */
  readonly longContextSource?: string;
  readonly astOptions?: AstCheckOptions;
  /** Only the first `limit` entries of each category (a quick look, not a score). */
  readonly limit?: number;
  /** The run directory's one-line notices (a resumed run, a torn last line). Default: a process warning. */
  readonly notify?: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Called after each entry is scored. */
  readonly onEntry?: (verdict: EntryVerdict, category: string, done: number, total: number) => void;
}

export interface BfclEvalReport {
  readonly summary: Summary;
  readonly scores: readonly CategoryScore[];
  /** Categories skipped, with the reason (agentic categories, files missing from the data folder). */
  readonly skipped: readonly { category: string; reason: string }[];
  readonly entriesFile: string;
  readonly summaryFile: string;
}

/**
 * Evaluate BFCL v4 categories and write the run directory. Each entry's verdict is appended to
 * `entries.jsonl` as soon as it is known, so an interrupted run keeps what it finished. When no
 * category asked for can be scored (no data folder, no question files, no saved results for
 * them), it throws an `InputError` before writing anything.
 */
export async function evaluateBfcl(options: BfclEvalOptions): Promise<BfclEvalReport> {
  const saved = options.source.kind === "results" ? await readResults(options.source.file) : undefined;
  checkRunnable(options, saved);
  const { runnable, skipped } = await selectEntries(options, saved);
  // Saved results can still miss every entry `limit` keeps: no score, so no summary.
  if (runnable.length === 0) throw new InputError(`nothing scored: ${skipped.map((s) => `${s.category} (${s.reason})`).join(", ")}`);
  const run = EvalRun.open({
    out: options.outDir,
    options: runOptions(options),
    entry: SavedVerdict,
    key: (r) => r.id,
    serialize: entryLine,
    notify: options.notify,
  });
  run.start(runnable.flatMap(({ entries }) => entries.map((entry) => entry.id)));
  // results.jsonl holds Python's json.dumps text, which may carry NaN.
  const resultsOut =
    options.source.kind === "policy"
      ? run.open("results.jsonl", z.unknown(), { parse: parsePyJson, serialize: (result: PyObject) => pyDumps(result) })
      : undefined;
  const scores = await scoreCategories(options, saved, runnable, run, resultsOut);
  const sizes = Object.create(null) as Record<string, number>;
  for (const category of ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"]) {
    if (!scores.some((s) => s.category === category) && hasCategory(options.dataDir, category)) sizes[category] = await countEntries(options.dataDir, category);
  }
  const summary = summarize(scores, sizes);
  run.writeSummary({ ...summary, skipped });
  run.writeFile("summary.md", `${summaryTable(summary)}\n`);
  return { summary, scores, skipped, entriesFile: run.entriesFile, summaryFile: run.summaryFile };
}

/** What decides an entry's verdict, which a run directory must have been made with to be resumed (categories and `limit` may change). */
function runOptions(options: BfclEvalOptions): Record<string, unknown> {
  const { source } = options;
  return {
    benchmark: "bfcl",
    source:
      source.kind === "policy"
        ? { kind: "policy", policy: source.policy.id, mode: source.mode, sampling: source.sampling }
        : source.kind === "results"
          ? { kind: "results", file: source.file }
          : { kind: "oracle" },
    astOptions: options.astOptions,
  };
}

/**
 * Refuse a run that would score nothing, so no summary reports 0% for categories never run: the
 * data folder must exist and hold a question file of a category asked for, and saved results
 * must have entries of such a category.
 */
function checkRunnable(options: BfclEvalOptions, saved: ReadonlyMap<string, PyObject> | undefined): void {
  const { dataDir, categories } = options;
  if (!existsSync(dataDir)) throw new InputError(`${dataDir}: no such folder (--data must be an upstream BFCL data folder, bfcl_eval/data)`);
  if (!statSync(dataDir).isDirectory()) throw new InputError(`${dataDir}: not a folder (--data must be an upstream BFCL data folder, bfcl_eval/data)`);
  const runnable = categories.filter((category) => !isAgentic(category));
  if (runnable.length === 0)
    throw new InputError(`nothing to run: agentic categories (web search, memory) need live backends and are not run (asked for ${categories.join(", ")})`);
  const present = runnable.filter((category) => hasCategory(dataDir, category));
  if (present.length === 0) {
    const example = questionFileName(runnable[0]!);
    throw new InputError(
      `${dataDir}: no BFCL question files for ${runnable.length === 1 ? runnable[0]! : `the ${runnable.length} categories asked for`} (expected ${example}${runnable.length > 1 ? " and the like" : ""})`,
    );
  }
  if (saved !== undefined && options.source.kind === "results") {
    const categoriesSaved = new Set([...saved.keys()].map(categoryOfId));
    if (!present.some((category) => categoriesSaved.has(category))) {
      throw new InputError(
        `${options.source.file}: no results for ${present.length === 1 ? present[0]! : `any of the ${present.length} categories in ${dataDir}`}`,
      );
    }
  }
}

/** A category to score, with its entries (`limit` applied). */
interface Runnable {
  readonly category: string;
  readonly entries: readonly Entry[];
}

/** The categories that can be scored, with their entries, and those skipped with the reason. */
async function selectEntries(
  options: BfclEvalOptions,
  saved: ReadonlyMap<string, PyObject> | undefined,
): Promise<{ runnable: Runnable[]; skipped: { category: string; reason: string }[] }> {
  const skipped: { category: string; reason: string }[] = [];
  const runnable: Runnable[] = [];
  for (const category of options.categories) {
    if (isAgentic(category)) {
      skipped.push({ category, reason: "agentic categories (web search, memory) need live backends and are not run" });
      continue;
    }
    if (!hasCategory(options.dataDir, category)) {
      skipped.push({ category, reason: "not in the data folder" });
      continue;
    }
    let entries = await loadCategory(options.dataDir, category);
    if (options.limit !== undefined) entries = entries.slice(0, options.limit);
    if (saved !== undefined && !entries.some((entry) => saved.has(entry.id))) {
      skipped.push({ category, reason: "no results for this category" });
      continue;
    }
    runnable.push({ category, entries });
  }
  return { runnable, skipped };
}

async function scoreCategories(
  options: BfclEvalOptions,
  saved: ReadonlyMap<string, PyObject> | undefined,
  runnable: readonly Runnable[],
  run: EvalRun<SavedVerdictLine, EntryVerdict>,
  resultsOut: JsonLinesFile<unknown, PyObject> | undefined,
): Promise<CategoryScore[]> {
  const scores: CategoryScore[] = [];
  let filler: LongContextFiller | undefined;
  for (const { category, entries } of runnable) {
    if (entries.some((e) => e.kind === "multi_turn" && e.longContext) && filler === undefined) filler = await longContextFiller(options);
    const previous = entries.flatMap((entry): EntryVerdict[] => {
      const line = run.done.get(entry.id);
      return line === undefined ? [] : [{ id: line.id, category, valid: line.valid, error: line.error ?? null }];
    });
    const pending = entries.filter((entry) => !run.done.has(entry.id));
    const verdicts = await scoreAll(pending, options, saved, filler, (scored, count) => {
      run.append(scored.verdict);
      resultsOut?.append(PyHashDict.of({ id: scored.verdict.id, result: scored.raw ?? null }));
      options.onEntry?.(scored.verdict, category, previous.length + count, entries.length);
    });
    scores.push(categoryScore(category, [...previous, ...verdicts.map((v) => v.verdict)]));
  }
  return scores;
}

async function longContextFiller(options: BfclEvalOptions): Promise<LongContextFiller> {
  const file = options.longContextSource ?? defaultLongContextSource(options.dataDir);
  if (file === undefined) {
    throw new BfclDataError(
      "multi_turn_long_context needs upstream's long_context.py (bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py); " +
        "point --data at an upstream bfcl_eval/data folder or pass --long-context <file>",
    );
  }
  return loadLongContextFiller(file);
}

/** What `entries.jsonl` keeps of a verdict (see `entryLine`). */
const SavedVerdict = z.object({ id: z.string(), valid: z.boolean(), error: z.string().nullable().optional() });
type SavedVerdictLine = z.output<typeof SavedVerdict>;

function entryLine(verdict: EntryVerdict): string {
  return JSON.stringify({ id: verdict.id, valid: verdict.valid, error: verdict.error, ...(verdict.turns ? { turns: verdict.turns } : {}) });
}

interface Scored {
  readonly verdict: EntryVerdict;
  /** The policy's raw output, for `results.jsonl`. */
  readonly raw?: PyObject;
}

/** Score entries (concurrently for policies), reporting each in entry order. */
async function scoreAll(
  entries: readonly Entry[],
  options: BfclEvalOptions,
  saved: ReadonlyMap<string, PyObject> | undefined,
  filler: LongContextFiller | undefined,
  report: (scored: Scored, done: number) => void,
): Promise<Scored[]> {
  const concurrency = options.source.kind === "policy" ? Math.max(1, options.source.concurrency ?? 8) : 1;
  const results: (Scored | undefined)[] = new Array<Scored | undefined>(entries.length);
  let next = 0;
  let reported = 0;
  // Reports run synchronously, so entries leave in entry order whichever worker finishes first.
  const flush = (): void => {
    while (reported < entries.length && results[reported] !== undefined) {
      const scored = results[reported]!;
      reported++;
      report(scored, reported);
    }
  };
  const worker = async (): Promise<void> => {
    while (next < entries.length) {
      const index = next++;
      if (options.signal?.aborted) throw options.signal.reason;
      results[index] = await scoreEntry(entries[index]!, options, saved, filler);
      flush();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, entries.length) }, worker));
  flush();
  return results as Scored[];
}

async function scoreEntry(
  entry: Entry,
  options: BfclEvalOptions,
  saved: ReadonlyMap<string, PyObject> | undefined,
  filler: LongContextFiller | undefined,
): Promise<Scored> {
  const source = options.source;
  if (entry.kind === "single_turn") {
    if (source.kind === "oracle") return { verdict: scoreSingleTurn(entry, { calls: oracleCalls(entry) }, options.astOptions) };
    if (source.kind === "results") {
      if (!saved!.has(entry.id)) return { verdict: missing(entry) };
      return { verdict: scoreSingleTurn(entry, decodeSingleTurnOutput(entry, saved!.get(entry.id)!), options.astOptions) };
    }
    const { output, raw } = await inferSingleTurn(entry, { policy: source.policy, mode: source.mode, ...sampling(source), ...signal(options) });
    const astOptions = source.mode === "fc" ? { ...options.astOptions, underscoreToDot: true } : options.astOptions;
    return { verdict: scoreSingleTurn(entry, output, astOptions), raw };
  }
  if (source.kind === "oracle") return { verdict: scoreMultiTurn(entry, oracleMultiTurnCalls(entry), filler) };
  if (source.kind === "results") {
    if (!saved!.has(entry.id)) return { verdict: missing(entry) };
    const decoded = decodeMultiTurnResult(saved!.get(entry.id)!);
    if (decoded === undefined)
      return { verdict: { id: entry.id, category: entry.category, valid: false, error: "multi_turn:inference_error: the result is not a list of turns" } };
    return { verdict: scoreMultiTurn(entry, decoded, filler) };
  }
  const inference = await inferMultiTurn(entry, {
    policy: source.policy,
    mode: source.mode,
    ...sampling(source),
    ...signal(options),
    ...(filler ? { filler } : {}),
  });
  return { verdict: scoreMultiTurn(entry, inference.calls, filler), raw: inference.raw };
}

function sampling(source: Extract<OutputSource, { kind: "policy" }>): { sampling?: SamplingParamsInput } {
  return source.sampling ? { sampling: source.sampling } : {};
}

function signal(options: BfclEvalOptions): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}

function missing(entry: Entry): EntryVerdict {
  return { id: entry.id, category: entry.category, valid: false, error: "missing: no result for this entry" };
}

function scoreMultiTurn(entry: MultiTurnEntry, calls: MultiTurnCalls, filler: LongContextFiller | undefined): EntryVerdict {
  const verdict = checkMultiTurn(entry, calls, filler ? { filler } : {});
  return {
    id: entry.id,
    category: entry.category,
    valid: verdict.valid,
    error: verdict.valid ? null : `${verdict.errorType}: ${verdict.error}`,
    turns: verdict.turns,
  };
}

/**
 * A saved multi-turn result (turns of steps of raw outputs) decoded as upstream's evaluator
 * does: each step decoded separately, steps that fail to decode or decode to nothing dropped.
 */
export function decodeMultiTurnResult(result: PyObject): MultiTurnCalls | undefined {
  if (!Array.isArray(result)) return undefined;
  return result.map((turn) => {
    const steps = Array.isArray(turn) ? turn : [];
    const decoded: string[][] = [];
    for (const step of steps) {
      try {
        const calls = decodeMultiTurnStep(step);
        if (calls.length > 0) decoded.push(calls);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
      }
    }
    return decoded;
  });
}

/** Read a results file: JSON Lines of `{"id", "result"}`; ids must be unique. */
export async function readResults(file: string): Promise<Map<string, PyObject>> {
  const results = new Map<string, PyObject>();
  for (const line of await readLines(file)) {
    const record = parsePy(line, 'an object {"id", "result"}');
    const id = record.get("id");
    if (typeof id !== "string" || id === "") throw new RecordError(line.source, [{ path: "id", message: "expected a non-empty string" }]);
    if (!record.has("result")) throw new RecordError(line.source, [{ path: "result", message: "is missing" }]);
    if (results.has(id)) throw new RecordError(line.source, [{ path: "id", message: `duplicate id "${id}"` }]);
    results.set(id, record.get("result")!);
  }
  return results;
}
