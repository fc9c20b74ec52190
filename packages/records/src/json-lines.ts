import { appendFileSync, closeSync, existsSync, fdatasyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { InputError, parseRecord, RecordError } from "@envace/protocol";
import { fsyncDirectory, writeFileAtomically } from "./atomic.js";
import { crashPoint } from "./crash-points.js";
import type { z } from "zod";

/**
 * JSON Lines under one rule, which depends on who wrote the file.
 *
 * - A file the project appends to (`source: "own"`: its metrics, entries, samples) gets each
 *   record as one line in one write, so a crash can cut short only the last line, and the cut
 *   line has no final newline. Such a last line that is not JSON is torn: it is dropped and
 *   reported to `onTornLine` (its record is simply redone), and a file opened for appending is
 *   truncated to its last whole line first.
 * - Any other bad line is a `RecordError` naming the file, the line and, for a record that fails
 *   its schema, each field: in the project's own files a bad line before the last, or a bad last
 *   line that ends in a newline (no append was cut there); in a file the user gives
 *   (`source: "user"`: predictions, data, tasks, labels) every bad line, the last one included.
 */

/** The last line of a file the project appends to, cut short by an interrupted write and dropped. */
export interface TornLine {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  readonly text: string;
}

interface ParseOptions {
  /** Reads one line; throws on text that is not a value. Default `JSON.parse` (e.g. Python's `json.loads` for its `NaN`). */
  readonly parse?: ((line: string) => unknown) | undefined;
}

/** A file the project appended to itself: a torn last line (no final newline) is dropped with a report. */
export interface OwnJsonLinesOptions extends ParseOptions {
  readonly source: "own";
  /** Told of a torn last line before it is dropped. Default: a process warning naming it. */
  readonly onTornLine?: ((torn: TornLine) => void) | undefined;
}

/** A file the user gives: every bad line is an error, and so is a missing file. */
export interface UserJsonLinesOptions extends ParseOptions {
  readonly source: "user";
}

/** Who wrote the file, which decides what a bad last line is (see the rule above). */
export type JsonLinesOptions = OwnJsonLinesOptions | UserJsonLinesOptions;

/** The one line that describes a torn last line. */
export function describeTornLine(torn: TornLine): string {
  return `${torn.file}:${torn.line}: dropped a last line cut short by an interrupted write`;
}

function warnTornLine(torn: TornLine): void {
  process.emitWarning(describeTornLine(torn), "TornLineWarning");
}

/** What a JSON Lines text holds: its records, and the torn last line with where it starts. */
interface Scan<T> {
  records: T[];
  torn?: TornLine & { offset: number };
}

function scan<S extends z.ZodType>(schema: S, text: string, file: string, options: JsonLinesOptions): Scan<z.output<S>> {
  const parse = options.parse ?? JSON.parse;
  const lines = text.split("\n");
  const records: z.output<S>[] = [];
  let offset = 0;
  for (const [index, raw] of lines.entries()) {
    const start = offset;
    offset += raw.length + 1;
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = parse(raw);
    } catch (error) {
      // Only the text after the last newline can be an append cut short: a newline ends a whole write.
      if (options.source === "own" && index === lines.length - 1) return { records, torn: { file, line: index + 1, text: raw, offset: start } };
      throw new RecordError({ file, line: index + 1 }, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
    }
    records.push(parseRecord(schema, value, { file, line: index + 1 }));
  }
  return { records };
}

/** The records of JSON Lines `text` read from `file` (named in errors); blank lines are skipped. */
export function parseJsonLines<S extends z.ZodType>(schema: S, text: string, file: string, options: JsonLinesOptions): z.output<S>[] {
  const { records, torn } = scan(schema, text, file, options);
  if (torn !== undefined && options.source === "own") (options.onTornLine ?? warnTornLine)({ file: torn.file, line: torn.line, text: torn.text });
  return records;
}

/**
 * The records of a JSON Lines file, which is left as it is. A missing file of the project's holds
 * none; a missing or unreadable file of the user's is an `InputError` naming it.
 */
export function readJsonLines<S extends z.ZodType>(file: string, schema: S, options: JsonLinesOptions): z.output<S>[] {
  if (options.source === "own" && !existsSync(file)) return [];
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseJsonLines(schema, text, file, options);
}

/** A file opened for appending is the project's own: options as for `source: "own"`. */
export interface JsonLinesFileOptions<T> extends Omit<OwnJsonLinesOptions, "source"> {
  /** Flush every line to disk (fdatasync) before `append` returns. Default false. */
  readonly durable?: boolean | undefined;
  /** The text of one record's line. Default `JSON.stringify`. */
  readonly serialize?: ((record: T) => string) | undefined;
}

/**
 * A JSON Lines file opened for appending: its records as read (`T`), then one line per `append`
 * of a record `W` (by default what is read; a wider one when `serialize` keeps only part of it).
 * Appends are synchronous, so lines from one process never interleave.
 */
export class JsonLinesFile<T, W = T> {
  private created: boolean;

  private constructor(
    readonly path: string,
    /** The records the file held when it was opened (not those appended since). */
    readonly records: T[],
    private readonly options: JsonLinesFileOptions<W>,
  ) {
    this.created = existsSync(path);
  }

  /**
   * Read `path` (missing: no records) and make it safe to append to: a torn last line is
   * reported and cut off, and a last record without its newline gets one.
   */
  static open<S extends z.ZodType, W = z.output<S>>(path: string, schema: S, options: JsonLinesFileOptions<W> = {}): JsonLinesFile<z.output<S>, W> {
    if (!existsSync(path)) return new JsonLinesFile(path, [], options);
    const text = readFileSync(path, "utf8");
    const { records, torn } = scan(schema, text, path, { ...options, source: "own" });
    let whole = text;
    if (torn !== undefined) {
      (options.onTornLine ?? warnTornLine)({ file: torn.file, line: torn.line, text: torn.text });
      whole = text.slice(0, torn.offset);
      truncateSync(path, Buffer.byteLength(whole, "utf8"));
    }
    if (whole !== "" && !whole.endsWith("\n")) appendFileSync(path, "\n");
    return new JsonLinesFile(path, records, options);
  }

  /** Append one record as one line; the folder is created on the first append. */
  append(record: W): void {
    const creating = !this.created;
    if (creating) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.created = true;
    }
    const fd = openSync(this.path, "a");
    try {
      writeFileSync(fd, `${(this.options.serialize ?? JSON.stringify)(record)}\n`);
      crashPoint("append:written");
      if (this.options.durable === true) fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // A new file's name is on disk only once its folder is flushed.
    if (creating && this.options.durable === true) fsyncDirectory(dirname(this.path));
    crashPoint("append:done");
  }

  /** Replace the whole file with `records`, atomically: a crash leaves the old file or the new. */
  rewrite(records: readonly W[]): void {
    const serialize = this.options.serialize ?? JSON.stringify;
    writeFileAtomically(this.path, records.map((record) => `${serialize(record)}\n`).join(""));
    this.created = true;
  }
}
