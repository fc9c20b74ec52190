import { readFile } from "node:fs/promises";
import { RecordError } from "@envace/protocol";
import { parseCm2Records } from "@envace/rewards";
import { fileError } from "./errors.js";
import { EMPTY_SPLIT, recordDomain, splitOf, type DataDomain, type RecordDomainOptions, type SourcedRecord, type Split } from "./records.js";

export interface Cm2DomainOptions extends RecordDomainOptions {
  /** Training records: a JSON array, JSON Lines, or a single record. */
  path: string;
  /** Held-out records, same formats; without it the domain has no held-out tasks. */
  testPath?: string;
}

/**
 * A trainer domain over CM2 checklist records (`{uuid, messages, tools, checklists}`): tasks from
 * `path` (and held-out tasks from `testPath`), scored by the checklist judge, with gold SFT
 * examples of both roles from each reference dialogue. A bad file or record throws before
 * anything is returned: a `RecordError` naming the file, line and field, or a `DataError`
 * listing every record whose reference dialogue cannot be a gold target.
 */
export async function cm2Domain(options: Cm2DomainOptions): Promise<DataDomain> {
  const train = await loadCm2Split(options.path);
  const test = options.testPath === undefined ? EMPTY_SPLIT : await loadCm2Split(options.testPath);
  return recordDomain("cm2", train, test, options);
}

/** The tasks and gold examples of one CM2 file. */
export async function loadCm2Split(path: string): Promise<Split> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw fileError(path, `cannot read CM2 records (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const records = parseCm2Records(text, path);
  if (records.length === 0) throw fileError(path, "no CM2 records in the file");
  const lines = uuidLines(text);
  const seen = new Map<string, number>();
  const sourced = records.map((record, index): SourcedRecord => {
    const occurrence = seen.get(record.uuid) ?? 0;
    seen.set(record.uuid, occurrence + 1);
    const line = lines.get(record.uuid)?.[occurrence];
    const source = { file: path, record: record.uuid, ...(line === undefined ? {} : { line }) };
    return {
      record,
      where: line === undefined ? `record ${index}` : `line ${line}`,
      error: (problems) => new RecordError(source, problems),
      metadata: { file: path, record: index },
    };
  });
  return splitOf(sourced);
}

const UUID_KEY = /"uuid"\s*:\s*("(?:[^"\\]|\\.)*")/g;

/**
 * The line of each occurrence of each `"uuid": "…"` key in the file, in order, so an error found
 * after parsing (in a JSON array or JSON Lines alike) still points at its record's line.
 */
export function uuidLines(text: string): Map<string, number[]> {
  const lines = new Map<string, number[]>();
  let line = 1;
  let scanned = 0;
  for (const match of text.matchAll(UUID_KEY)) {
    for (; scanned < match.index; scanned++) if (text.charCodeAt(scanned) === 10) line++;
    let uuid: unknown;
    try {
      uuid = JSON.parse(match[1]!);
    } catch {
      continue;
    }
    if (typeof uuid !== "string") continue;
    const list = lines.get(uuid) ?? [];
    list.push(line);
    lines.set(uuid, list);
  }
  return lines;
}
