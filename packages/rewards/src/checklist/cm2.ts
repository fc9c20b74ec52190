import { readFile } from "node:fs/promises";
import { Cm2Record, parseRecord, RecordError, type RecordSource, type Task } from "@envace/protocol";
import { DialogueError } from "./dialogue.js";

/**
 * Read CM2 checklist records from a file: a JSON array of records, JSON Lines (one record a
 * line), or a single record. See `parseCm2Records`.
 */
export async function loadCm2Records(path: string): Promise<Cm2Record[]> {
  return parseCm2Records(await readFile(path, "utf8"), path);
}

/**
 * Parse CM2 records from text. Each record is checked against the protocol's `Cm2Record` and
 * against what the checklist judge relies on: a dialogue with at least one user message, every
 * checklist with one turn per user message, and no dependency cycles. The first bad record throws
 * a `RecordError` naming the file, its line, its uuid (or index) and each offending field.
 */
export function parseCm2Records(text: string, file: string): Cm2Record[] {
  const body = text.replace(/^\uFEFF/, "");
  const start = body.trimStart();
  if (start.startsWith("[")) return parseArray(body, file);
  if (start.startsWith("{") && isJson(body)) return [parseOne(body, { file, line: lineAt(body, body.indexOf("{")) })];
  return parseLines(body, file);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseLines(text: string, file: string): Cm2Record[] {
  const records: Cm2Record[] = [];
  text.split("\n").forEach((raw, index) => {
    if (raw.trim() === "") return;
    records.push(parseOne(raw, { file, line: index + 1 }));
  });
  return records;
}

function parseArray(text: string, file: string): Cm2Record[] {
  return splitTopLevelArray(text, file).map((element, index) => parseOne(element.text, { file, line: element.line, record: index }));
}

function parseOne(text: string, source: RecordSource): Cm2Record {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordError(source, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
  }
  const uuid = (value as { uuid?: unknown } | null)?.uuid;
  const named: RecordSource = typeof uuid === "string" && uuid !== "" ? { ...source, record: uuid } : source;
  const record = parseRecord(Cm2Record, value, named);
  const problems = checkCm2Record(record);
  if (problems.length > 0) throw new RecordError(named, problems);
  return record;
}

/**
 * What the protocol schema cannot see: the dialogue has a user message, every checklist has one
 * turn per user message, and dependencies form no cycle.
 */
export function checkCm2Record(record: Cm2Record): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const userTurns = record.messages.filter((m) => m.role === "user").length;
  if (userTurns === 0) problems.push({ path: "messages", message: "the dialogue has no user message" });
  if (record.checklists.length === 0) problems.push({ path: "checklists", message: "no checklist" });
  record.checklists.forEach((checklist, c) => {
    if (userTurns > 0 && checklist.length !== userTurns) {
      problems.push({ path: `checklists[${c}]`, message: `has ${checklist.length} turns but the dialogue has ${userTurns} user turns` });
    }
    checklist.forEach((items, t) => {
      const cycle = findCycle(items.map((item) => ({ id: item.id, deps: item.dependence })));
      if (cycle) problems.push({ path: `checklists[${c}][${t}]`, message: `dependency cycle ${cycle.join(" → ")}` });
    });
  });
  return problems;
}

function findCycle(nodes: readonly { id: string; deps: readonly string[] }[]): string[] | undefined {
  const deps = new Map(nodes.map((n) => [n.id, n.deps]));
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === "done") return undefined;
    if (state.get(id) === "open") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "open");
    path.push(id);
    for (const dep of deps.get(id) ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const node of nodes) {
    const cycle = visit(node.id);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * The elements of a top-level JSON array as text, each with the line it starts on, so that a bad
 * element can be reported by line and index instead of failing the whole file at once.
 */
function splitTopLevelArray(text: string, file: string): { text: string; line: number }[] {
  const fail = (at: number, message: string): never => {
    throw new RecordError({ file, line: lineAt(text, at) }, [{ path: "", message }]);
  };
  const elements: { text: string; line: number }[] = [];
  let i = skipSpace(text, 0);
  i++; // the opening bracket
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) fail(i, "not JSON (the array is not closed)");
    if (text[i] === "]" && elements.length === 0) {
      i++;
      break;
    }
    const start = i;
    let depth = 0;
    for (; i < text.length; i++) {
      const ch = text[i];
      if (ch === '"') {
        for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      } else if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        if (depth === 0) break;
        depth--;
      } else if (ch === "," && depth === 0) break;
    }
    if (i >= text.length) fail(start, "not JSON (the array is not closed)");
    elements.push({ text: text.slice(start, i), line: lineAt(text, start) });
    if (text[i] === "]") {
      i++;
      break;
    }
    i++; // the comma
  }
  if (skipSpace(text, i) < text.length) fail(skipSpace(text, i), "not JSON (text after the closing bracket of the array)");
  return elements;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * A CM2 record as a task: the reference dialogue in `reference`, the messages up to and including
 * the first user message as the starting context (the verl `prompt`), its tools and checklists.
 */
export function cm2ToTask(record: Cm2Record, metadata: Task["metadata"] = {}): Task {
  const firstUser = record.messages.findIndex((m) => m.role === "user");
  if (firstUser === -1) throw new DialogueError(`CM2 record "${record.uuid}" has no user message`);
  return {
    id: record.uuid,
    messages: record.messages.slice(0, firstUser + 1),
    tools: record.tools,
    reference: record.messages,
    checklists: record.checklists,
    metadata: { format: "cm2", ...metadata },
  };
}
