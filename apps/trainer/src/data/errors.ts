import { InputError, RecordError } from "@envace/protocol";
import type { FieldProblem } from "./gold.js";

/** How many bad records a `DataError` message lists before it summarises the rest. */
const LISTED = 20;

/**
 * Every bad record of a data file at once, so one run of the loader shows all that needs fixing.
 * `errors` holds each record's `RecordError` (file, line or row, and fields).
 */
export class DataError extends InputError {
  override readonly code: string = "data";
  override readonly name = "DataError";

  constructor(readonly errors: readonly RecordError[]) {
    const listed = errors.slice(0, LISTED).map((error) => error.message);
    const rest = errors.length > LISTED ? [`… and ${errors.length - LISTED} more bad records`] : [];
    super(errors.length === 1 ? listed[0]! : [`${errors.length} bad records:`, ...listed, ...rest].join("\n"));
  }
}

/**
 * A bad row of a Parquet file: names the file, the row (counted from 0, as pandas and Arrow do),
 * the record's uuid when it has one, and each offending field.
 */
export class RowError extends RecordError {
  constructor(
    file: string,
    readonly row: number,
    uuid: string | undefined,
    fields: readonly FieldProblem[],
  ) {
    super({ file, record: uuid ?? row }, fields);
    const where = `${file} row ${row}${uuid === undefined ? "" : ` (record ${uuid})`}`;
    this.message = `${where}: ${fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message)).join("; ")}`;
  }
}

/** A problem with a whole file (unreadable, empty, not the expected format), as a `RecordError`. */
export function fileError(file: string, message: string, path = ""): RecordError {
  return new RecordError({ file }, [{ path, message }]);
}

/** Throws every collected error at once; does nothing when there are none. */
export function throwIfAny(errors: readonly RecordError[]): void {
  if (errors.length > 0) throw new DataError(errors);
}
