import { appendFileSync, closeSync, existsSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseRecord, RecordError } from "@envace/protocol";
import type { z } from "zod";

/**
 * JSON Lines under one policy, whoever wrote the file. A record is appended as one line in one
 * write, so a crash can cut short only the last line: a last line that is not JSON is dropped and
 * reported to `onTornLine` (its record is simply redone), and a file opened for appending is
 * truncated to its last whole line first. A bad line anywhere else is a `RecordError` naming the
 * file, the line and, for a record that fails its schema, each field.
 */

/** The last line of a JSON Lines file, cut short by an interrupted write and dropped. */
export interface TornLine {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  readonly text: string;
}

export interface JsonLinesOptions {
  /** Told of a torn last line before it is dropped. Default: a process warning naming it. */
  readonly onTornLine?: ((torn: TornLine) => void) | undefined;
  /** Reads one line; throws on text that is not a value. Default `JSON.parse` (e.g. Python's `json.loads` for its `NaN`). */
  readonly parse?: ((line: string) => unknown) | undefined;
}

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

function scan<S extends z.ZodType>(schema: S, text: string, file: string, parse: (line: string) => unknown = JSON.parse): Scan<z.output<S>> {
  const lines = text.split("\n");
  // Trailing blank lines do not make a torn line any less the last one.
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === "") last--;
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
      if (index === last) return { records, torn: { file, line: index + 1, text: raw, offset: start } };
      throw new RecordError({ file, line: index + 1 }, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
    }
    records.push(parseRecord(schema, value, { file, line: index + 1 }));
  }
  return { records };
}

/** The records of JSON Lines `text` read from `file` (named in errors); blank lines are skipped. */
export function parseJsonLines<S extends z.ZodType>(schema: S, text: string, file: string, options: JsonLinesOptions = {}): z.output<S>[] {
  const { records, torn } = scan(schema, text, file, options.parse);
  if (torn !== undefined) (options.onTornLine ?? warnTornLine)({ file: torn.file, line: torn.line, text: torn.text });
  return records;
}

/** The records of a JSON Lines file; a missing file holds none. The file is left as it is. */
export function readJsonLines<S extends z.ZodType>(file: string, schema: S, options: JsonLinesOptions = {}): z.output<S>[] {
  if (!existsSync(file)) return [];
  return parseJsonLines(schema, readFileSync(file, "utf8"), file, options);
}

export interface JsonLinesFileOptions<T> extends JsonLinesOptions {
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
    const { records, torn } = scan(schema, text, path, options.parse);
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
    if (!this.created) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.created = true;
    }
    const fd = openSync(this.path, "a");
    try {
      writeFileSync(fd, `${(this.options.serialize ?? JSON.stringify)(record)}\n`);
      if (this.options.durable === true) fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Replace the whole file with `records`, atomically: a crash leaves the old file or the new. */
  rewrite(records: readonly W[]): void {
    const serialize = this.options.serialize ?? JSON.stringify;
    writeFileAtomically(this.path, records.map((record) => `${serialize(record)}\n`).join(""));
    this.created = true;
  }
}

/** Write `text` to `file` atomically (a temporary file renamed over it), creating its folder. */
export function writeFileAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.tmp`;
  const fd = openSync(temporary, "w");
  try {
    writeFileSync(fd, text);
    // The rename must not reach the disk before the contents it names.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}
