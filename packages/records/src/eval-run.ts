import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { InputError, RecordError } from "@envace/protocol";
import { writeFileAtomically } from "./atomic.js";
import { canonicalJson } from "./canonical.js";
import { describeTornLine, JsonLinesFile, readJsonLines, type TornLine } from "./json-lines.js";
import type { z } from "zod";

/**
 * An evaluation's run directory, under one resume rule:
 *
 * - `options.json`: what decides each entry's result (model, data, sampling, limits), written
 *   once, atomically, when the run starts. Which entries are asked for (tasks, trials, settings,
 *   a limit) is not an option: a later invocation may ask for more or fewer.
 * - `entries.jsonl`: one line per entry as it finishes (the torn-line rule of `JsonLinesFile`).
 * - `summary.json`: written whole, atomically, over the entries asked for.
 *
 * Opening a folder: none, or one without a run, starts fresh; one with the same options resumes
 * (entries already there are kept and not run again); one with other options, or with entries
 * but no `options.json` (made by an older version), is refused with a `RunDirectoryError`.
 */

/** The run directory cannot hold this run: it was made with other options, or by an older version. */
export class RunDirectoryError extends InputError {
  override readonly code: string = "run-directory";
}

/** The names of a run directory's files. */
export const RUN_FILES = { options: "options.json", entries: "entries.jsonl", summary: "summary.json" } as const;

export interface EvalRunSpec<S extends z.ZodType, W> {
  /** The run directory. */
  readonly out: string;
  /** What decides each entry's result: a JSON object, whose values are compared by their canonical JSON. */
  readonly options: object;
  /** The schema of a line of `entries.jsonl`. */
  readonly entry: S;
  /** The key of an entry (a task id, with its trial or setting): an entry asked for whose key is there is not run again. */
  readonly key: (entry: z.output<S>) => string;
  /** The text of an entry's line (default `JSON.stringify`). */
  readonly serialize?: ((entry: W) => string) | undefined;
  /** Reads one line (default `JSON.parse`). */
  readonly parse?: ((line: string) => unknown) | undefined;
  /**
   * The run directory's notices, one line each: a torn last line dropped, a run resumed, a run
   * with nothing left to do. Default: a process warning.
   */
  readonly notify?: ((line: string) => void) | undefined;
  /** An older version's name for the options file, adopted when it holds the same options. */
  readonly legacyOptionsFile?: string | undefined;
}

/** How many of the entries asked for were already there. */
export interface RunProgress {
  readonly out: string;
  readonly done: number;
  readonly total: number;
}

/** The line that says a run resumes, or that it has nothing left to do. */
export function describeResume({ out, done, total }: RunProgress): string {
  const entries = (n: number): string => `${n} ${n === 1 ? "entry" : "entries"}`;
  if (done === total) return `${out} already holds the ${entries(total)} asked for: nothing left to run; the summary is made again from them`;
  return `resuming ${out}: ${done} of ${entries(total)} already done, ${total - done} to run`;
}

/** The differences between two options records, one `name: before → after` each, in name order. */
export function optionDifferences(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const show = (value: unknown): string => (value === undefined ? "(none)" : JSON.stringify(value));
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.filter((name) => canonical(before[name]) !== canonical(after[name])).map((name) => `${name}: ${show(before[name])} → ${show(after[name])}`);
}

function canonical(value: unknown): string | undefined {
  return value === undefined ? undefined : canonicalJson(value);
}

/**
 * A finished or running evaluation's options and entries, read without opening it for writing (to
 * compare runs): a folder without `options.json` is a `RunDirectoryError` naming it, a bad entry
 * line a `RecordError` naming file and line.
 */
export function readRun<S extends z.ZodType>(out: string, entry: S): { options: Record<string, unknown>; entries: z.output<S>[] } {
  const optionsFile = join(out, RUN_FILES.options);
  if (!existsSync(optionsFile)) throw new RunDirectoryError(`${out}: not an evaluation's run directory (no ${RUN_FILES.options})`);
  return { options: readOptionsFile(optionsFile), entries: readJsonLines(join(out, RUN_FILES.entries), entry, { source: "own" }) };
}

/** A JSON object file of an earlier run; a torn or hand-edited one is an error naming it. */
function readOptionsFile(file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new RecordError({ file }, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new RecordError({ file }, [{ path: "", message: "expected a JSON object" }]);
  return value as Record<string, unknown>;
}

function holdsData(file: string): boolean {
  return existsSync(file) && statSync(file).size > 0;
}

/**
 * Open `out` for a run with `spec.options` under the rule above. Nothing is written but a torn
 * last line cut off `entries.jsonl`; `options.json` is written by `start`.
 */
export class EvalRun<T, W = T> {
  private started = false;

  private constructor(
    readonly out: string,
    private readonly options: object,
    private readonly entries: JsonLinesFile<T, W>,
    /** The entries already in the run directory, by key (the first of a repeated key). */
    readonly done: ReadonlyMap<string, T>,
    private readonly notify: (line: string) => void,
    private readonly recorded: boolean,
  ) {}

  static open<S extends z.ZodType, W = z.output<S>>(spec: EvalRunSpec<S, W>): EvalRun<z.output<S>, W> {
    const { out } = spec;
    const notify = spec.notify ?? ((line: string) => process.emitWarning(line, "RunDirectoryWarning"));
    const optionsFile = join(out, RUN_FILES.options);
    const legacyFile = spec.legacyOptionsFile === undefined ? undefined : join(out, spec.legacyOptionsFile);
    const recordFile = existsSync(optionsFile) ? optionsFile : legacyFile !== undefined && existsSync(legacyFile) ? legacyFile : undefined;
    if (recordFile !== undefined) {
      const differences = optionDifferences(readOptionsFile(recordFile), spec.options as Readonly<Record<string, unknown>>);
      if (differences.length > 0)
        throw new RunDirectoryError(`${out} holds a run with other options (${differences.join(", ")}); use another --out, or the same options to resume it`);
    } else {
      const made = [RUN_FILES.entries, RUN_FILES.summary].filter((name) => holdsData(join(out, name)));
      if (made.length > 0) {
        throw new RunDirectoryError(
          `${out} holds ${made.join(" and ")} but no ${RUN_FILES.options} (an older version made it, and its options cannot be checked); use another --out`,
        );
      }
    }
    const entries = JsonLinesFile.open(join(out, RUN_FILES.entries), spec.entry, {
      onTornLine: (torn: TornLine) => notify(`${describeTornLine(torn)}; its entry runs again`),
      serialize: spec.serialize,
      parse: spec.parse,
    });
    const done = new Map<string, z.output<S>>();
    for (const entry of entries.records) {
      const key = spec.key(entry);
      if (!done.has(key)) done.set(key, entry);
    }
    return new EvalRun(out, spec.options, entries, done, notify, recordFile === optionsFile);
  }

  get entriesFile(): string {
    return this.entries.path;
  }

  get summaryFile(): string {
    return join(this.out, RUN_FILES.summary);
  }

  /**
   * Start the run over the entries asked for (their keys): `options.json` is written if it is
   * not there yet, a resumed run is told in one line, and the keys still to run are returned, in order.
   */
  start(keys: Iterable<string>): string[] {
    const asked = [...new Set(keys)];
    const pending = asked.filter((key) => !this.done.has(key));
    this.record();
    if (pending.length < asked.length) this.notify(describeResume({ out: this.out, done: asked.length - pending.length, total: asked.length }));
    return pending;
  }

  /** Append one finished entry as one line. */
  append(entry: W): void {
    this.record();
    this.entries.append(entry);
  }

  /** Another JSON Lines file of the run directory (the conversations, raw outputs), appended to under the same rule. */
  open<S extends z.ZodType, V = z.output<S>>(
    name: string,
    schema: S,
    options: { serialize?: (record: V) => string; parse?: (line: string) => unknown } = {},
  ): JsonLinesFile<z.output<S>, V> {
    return JsonLinesFile.open(join(this.out, name), schema, { ...options, onTornLine: (torn: TornLine) => this.notify(describeTornLine(torn)) });
  }

  /** Write the summary, whole and atomically, as indented JSON. */
  writeSummary(summary: unknown): void {
    this.writeFile(RUN_FILES.summary, `${JSON.stringify(summary, null, 2)}\n`);
  }

  /** Write another file of the run directory whole, atomically (a summary table). */
  writeFile(name: string, text: string): void {
    this.record();
    writeFileAtomically(join(this.out, name), text);
  }

  /** Write `options.json` once, before anything else of this run. */
  private record(): void {
    if (this.started) return;
    this.started = true;
    if (!this.recorded) writeFileAtomically(join(this.out, RUN_FILES.options), `${JSON.stringify(this.options, null, 2)}\n`);
  }
}
