import { EnvaceError } from "@envace/errors";
import type { z } from "zod";

/** Where a record came from, so an error can point at it. */
export interface RecordSource {
  /** A file path, URL or other name the user recognises. */
  file: string;
  /** 1-based line number for JSON Lines input. */
  line?: number;
  /** Index or id of the record inside a file that holds several. */
  record?: string | number;
}

/**
 * Something the person running a program gave it — an option's value, a config, a file or
 * folder, the address of a server — is wrong or cannot be used. The message says what and where
 * in full, so a command prints it alone: a stack trace would add nothing for them to act on.
 */
export class InputError extends EnvaceError {
  readonly code: string = "input";
}

/** A bad input record: names the file, line or record, and each offending field. */
export class RecordError extends InputError {
  override readonly code: string = "record";
  constructor(
    readonly source: RecordSource,
    readonly fields: readonly { path: string; message: string }[],
  ) {
    super(`${describeSource(source)}: ${fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message)).join("; ")}`);
  }
}

export function describeSource(source: RecordSource): string {
  let where = source.file;
  if (source.line !== undefined) where += `:${source.line}`;
  if (source.record !== undefined) where += ` (record ${source.record})`;
  return where;
}

/** Render a zod issue path as `messages[2].tool_calls[0].function.name`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** Validate `value` against `schema`, or throw a `RecordError` that names the source and fields. */
export function parseRecord<S extends z.ZodType>(schema: S, value: unknown, source: RecordSource): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new RecordError(
    source,
    result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })),
  );
}
