import { Cm2Record, formatPath, type RecordError } from "@envace/protocol";
import { canonicalJson } from "@envace/records";
import { checkCm2Record } from "@envace/rewards";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from "hyparquet";
import { fileError, RowError, throwIfAny } from "./errors.js";
import type { FieldProblem } from "./gold.js";
import { checkRecords, EMPTY_SPLIT, recordDomain, type DataDomain, type RecordDomainOptions, type SourcedRecord, type Split } from "./records.js";

export interface VerlReadOptions {
  /** The column holding the prompt (verl `data.prompt_key`). Default `prompt`; the column may be absent. */
  promptKey?: string;
}

export interface VerlDomainOptions extends RecordDomainOptions, VerlReadOptions {
  /** Training rows: a verl Parquet file. */
  path: string;
  /** Held-out rows, same layout; without it the domain has no held-out tasks. */
  testPath?: string;
}

/**
 * A trainer domain over CM2 data in verl's Parquet layout: each row is converted to a CM2 record
 * (see `readVerlRecords`) and used as `cm2Domain` uses records.
 */
export async function verlDomain(options: VerlDomainOptions): Promise<DataDomain> {
  const train = await loadVerlSplit(options.path, options);
  const test = options.testPath === undefined ? EMPTY_SPLIT : await loadVerlSplit(options.testPath, options);
  return recordDomain("verl", train, test, options);
}

/** The tasks and gold examples of one verl Parquet file. */
export async function loadVerlSplit(path: string, options: VerlReadOptions = {}): Promise<Split> {
  const rows = await convertVerlFile(path, options);
  const checked = checkRecords(rows.records);
  // Conversion and gold problems are reported together, in row order.
  throwIfAny([...rows.errors, ...checked.errors].sort((a, b) => rowOf(a) - rowOf(b)));
  return checked.split;
}

function rowOf(error: RecordError): number {
  return error instanceof RowError ? error.row : -1;
}

const UTF8 = new TextDecoder();

/** Where each part of a CM2 record lives in a verl row. */
const VERL_FIELDS: Readonly<Record<string, string>> = {
  messages: "extra_info.messages",
  tools: "extra_info.tools",
  checklists: "extra_info.interaction_kwargs.checklist_list",
};

/** A CM2 field path (`messages[2].content`) as the verl row field that holds it. */
export function verlField(path: string): string {
  // eslint-disable-next-line regexp/no-super-linear-backtracking -- a field path of this project's own CM2 items, short and trusted
  const match = /^([a-z_]+)(.*)$/.exec(path);
  const mapped = match === null ? undefined : VERL_FIELDS[match[1]!];
  return mapped === undefined ? path : `${mapped}${match![2]!}`;
}

/**
 * CM2 records from a verl Parquet file, one per row: `extra_info.messages` is the reference
 * dialogue, `extra_info.tools` its tools (a JSON string, or a list), `extra_info.interaction_kwargs`
 * `{name: "checklist", checklist_list}` its checklists; the prompt column, when present, must be
 * the dialogue up to its first user message. The uuid is the row's `uuid` column, else
 * `extra_info.uuid`, `extra_info.original_index` or `extra_info.index`, else `row-<index>`.
 *
 * Arrow's struct filling is undone first: null fields of messages and tools are dropped (an
 * assistant `content` of null is kept), 64-bit integers become numbers. Every bad row is
 * reported at once, each naming the file, the row (from 0) and the fields; no record is
 * returned unless every row is good.
 */
export async function readVerlRecords(path: string, options: VerlReadOptions = {}): Promise<SourcedRecord[]> {
  const { records, errors } = await convertVerlFile(path, options);
  throwIfAny(errors);
  return records;
}

async function convertVerlFile(path: string, options: VerlReadOptions): Promise<{ records: SourcedRecord[]; errors: RecordError[] }> {
  const promptKey = options.promptKey ?? "prompt";
  const { file, metadata } = await openParquet(path);
  const columns = parquetSchema(metadata).children.map((child) => child.element.name);
  if (!columns.includes("extra_info")) {
    throw fileError(path, `no such column; the file has ${columns.join(", ") || "no columns"}`, "extra_info");
  }
  const wanted = ["extra_info", promptKey, "uuid", "data_source"].filter((name) => columns.includes(name));
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({
      file,
      metadata,
      columns: wanted,
      rowFormat: "object",
      // JSON columns are parsed per row below, so a bad cell is reported by its row.
      parsers: { jsonFromBytes: (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : UTF8.decode(bytes)) },
    });
  } catch (error) {
    throw fileError(path, `cannot decode the Parquet data (${(error as Error).message})`);
  }
  if (rows.length === 0) throw fileError(path, "no rows in the file");

  const errors: RecordError[] = [];
  const records: SourcedRecord[] = [];
  rows.forEach((raw, row) => {
    const converted = verlRowRecord(plainValues(raw) as Record<string, unknown>, row, promptKey);
    if (converted.problems.length > 0) {
      errors.push(new RowError(path, row, converted.uuid, converted.problems));
      return;
    }
    const record = converted.record!;
    const dataSource = raw.data_source;
    records.push({
      record,
      where: `row ${row}`,
      error: (problems) =>
        new RowError(
          path,
          row,
          record.uuid,
          problems.map((p) => ({ ...p, path: verlField(p.path) })),
        ),
      metadata: { file: path, row, ...(typeof dataSource === "string" ? { data_source: dataSource } : {}) },
    });
  });
  return { records, errors };
}

async function openParquet(path: string): Promise<{ file: AsyncBuffer; metadata: FileMetaData }> {
  let file: AsyncBuffer;
  try {
    file = await asyncBufferFromFile(path);
  } catch (error) {
    throw fileError(path, `cannot read verl Parquet (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return { file, metadata: await parquetMetadataAsync(file) };
  } catch (error) {
    throw fileError(path, `not a Parquet file (${(error as Error).message})`);
  }
}

interface ConvertedRow {
  record?: Cm2Record;
  uuid: string | undefined;
  problems: FieldProblem[];
}

/** One verl row as a checked CM2 record, or its problems by verl field path. */
function verlRowRecord(row: Record<string, unknown>, index: number, promptKey: string): ConvertedRow {
  const problems: FieldProblem[] = [];
  const extra = jsonField(row.extra_info, "extra_info", problems);
  if (extra === undefined) return { uuid: undefined, problems };
  if (!isObject(extra)) {
    return { uuid: undefined, problems: [{ path: "extra_info", message: `expected an object, got ${describe(extra)}` }] };
  }
  const uuid = uuidOf(row, extra) ?? `row-${index}`;

  const messages = withoutNulls(jsonField(extra.messages, "extra_info.messages", problems), true);
  const toolsValue = jsonField(extra.tools, "extra_info.tools", problems);
  const tools = typeof extra.tools === "string" ? toolsValue : withoutNulls(toolsValue, false);
  const interaction = jsonField(extra.interaction_kwargs, "extra_info.interaction_kwargs", problems);
  let checklists: unknown;
  if (interaction !== undefined) {
    if (!isObject(interaction)) {
      problems.push({ path: "extra_info.interaction_kwargs", message: `expected an object, got ${describe(interaction)}` });
    } else {
      if (interaction.name !== "checklist") {
        problems.push({ path: "extra_info.interaction_kwargs.name", message: `expected "checklist", got ${describe(interaction.name)}` });
      }
      checklists = jsonField(interaction.checklist_list, "extra_info.interaction_kwargs.checklist_list", problems);
    }
  }

  const parsed = Cm2Record.safeParse({ uuid, messages, tools, checklists });
  if (parsed.success) {
    problems.push(...checkCm2Record(parsed.data).map((p) => ({ ...p, path: verlField(p.path) })));
  } else {
    const reported = new Set(problems.map((p) => p.path));
    for (const issue of parsed.error.issues) {
      const path = verlField(formatPath(issue.path));
      // A field already reported as missing or not JSON is not reported again by the schema.
      if (![...reported].some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`))) problems.push({ path, message: issue.message });
    }
  }
  const prompt = row[promptKey];
  if (prompt !== undefined && prompt !== null && Array.isArray(messages)) problems.push(...checkPrompt(prompt, messages, promptKey));
  return parsed.success && problems.length === 0 ? { record: parsed.data, uuid, problems } : { uuid, problems };
}

/** The prompt column must be the reference dialogue up to and including its first user message. */
function checkPrompt(value: unknown, messages: readonly unknown[], key: string): FieldProblem[] {
  const prompt = withoutNulls(typeof value === "string" ? tryJson(value) : value, true);
  const firstUser = messages.findIndex((m) => isObject(m) && m.role === "user");
  const expected = messages.slice(0, firstUser + 1);
  if (sameJson(prompt, expected)) return [];
  const length = Array.isArray(prompt) ? `${prompt.length} messages` : describe(prompt);
  return [{ path: key, message: `is not extra_info.messages up to the first user message (${length}, expected the first ${expected.length})` }];
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

function uuidOf(row: Record<string, unknown>, extra: Record<string, unknown>): string | undefined {
  for (const candidate of [row.uuid, extra.uuid, extra.original_index, extra.index]) {
    if (typeof candidate === "string" && candidate !== "") return candidate;
    if (typeof candidate === "number" && Number.isFinite(candidate)) return String(candidate);
  }
  return undefined;
}

/** A value that may be stored as JSON text (a JSON column, or `tools` as verl writes it). */
function jsonField(value: unknown, path: string, problems: FieldProblem[]): unknown {
  if (value === undefined || value === null) {
    problems.push({ path, message: "missing" });
    return undefined;
  }
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    problems.push({ path, message: `not JSON (${(error as Error).message})` });
    return undefined;
  }
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Arrow writes a list of structs with the union of their fields, null where a struct lacks one.
 * Drop those nulls (keeping `content`, which an assistant message may hold as null) so messages
 * and tool schemas read as written.
 */
function withoutNulls(value: unknown, keepContent: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutNulls(item, keepContent));
  if (!isObject(value)) return value;
  // No prototype: a `__proto__` key of the file is a key, never the prototype that later reads see through.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    if (item === null && !(keepContent && key === "content")) continue;
    out[key] = withoutNulls(item, keepContent);
  }
  return out;
}

/** Parquet values as plain JSON-like values: safe 64-bit integers as numbers, typed arrays as arrays. */
function plainValues(value: unknown): unknown {
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return Array.from(value as unknown as ArrayLike<unknown>, plainValues);
  if (Array.isArray(value)) return value.map(plainValues);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainValues(item)]));
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date) && !ArrayBuffer.isView(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return `${typeof value} ${value}`;
  return typeof value === "object" ? "an object" : typeof value;
}
