import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError, parseRecord, RecordError } from "@envace/protocol";
import type { RecordSource } from "@envace/protocol";
import { JsonDecodeError, PyHashDict, type PyObject } from "@envace/python-text";
import * as z from "zod";
import { categoryOfId, isAgentic, isLongContext, isMultiTurn, isRelevanceOrIrrelevance, questionFileName } from "./categories.js";
import type { AnswerCall } from "./checker/ast.js";
import { parsePyJson } from "./py/json.js";

// The schemas keep the fields the checker reads and drop the rest (`enum`, `default`, nested
// properties): the docs as shipped, every key in order, are `rawFunctions`. Keeping unknown keys
// made zod's first validation of the records 1.7 times slower, for values nothing read.

/** A chat message of a BFCL question. */
export const ChatMessage = z.object({ role: z.string(), content: z.string() });
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A parameter of a BFCL function doc. Types are Gorilla types (`dict`, `float`, `tuple`, `any`, Java/JS types). */
export const ParamSchema = z.object({
  type: z.string(),
  description: z.string().optional(),
  items: z.object({ type: z.string().optional() }).optional(),
});
export type ParamSchema = z.infer<typeof ParamSchema>;

/** A function doc as BFCL ships it, the fields the checker reads. */
export const FunctionDoc = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  parameters: z.object({
    type: z.string().optional(),
    properties: z.record(z.string(), ParamSchema).default({}),
    required: z.array(z.string()).default([]),
  }),
});
export type FunctionDoc = z.infer<typeof FunctionDoc>;

const SingleTurnRecord = z.object({
  id: z.string().min(1),
  question: z.array(z.array(ChatMessage)),
  function: z.array(FunctionDoc),
});

const MultiTurnRecord = z.object({
  id: z.string().min(1),
  question: z.array(z.array(ChatMessage)),
  initial_config: z.record(z.string(), z.unknown()).default({}),
  involved_classes: z.array(z.string()).min(1),
  missed_function: z.record(z.string(), z.array(z.string())).optional(),
  excluded_function: z.array(z.string()).optional(),
});

/** One single-turn entry: its question, the functions offered, and the reference answer if scored by AST. */
export interface SingleTurnEntry {
  readonly kind: "single_turn";
  readonly id: string;
  readonly category: string;
  readonly question: readonly ChatMessage[];
  readonly functions: readonly FunctionDoc[];
  /** The same function docs as parsed Python values, key order and float literals kept (for prompts). */
  readonly rawFunctions: readonly PyHashDict[];
  /** Absent for relevance and irrelevance categories, which are scored on whether any call is made. */
  readonly answer?: readonly AnswerCall[];
  readonly source: RecordSource;
}

/** One multi-turn entry: user turns, environment classes and their start state, and the gold call strings per turn. */
export interface MultiTurnEntry {
  readonly kind: "multi_turn";
  readonly id: string;
  readonly category: string;
  /** User messages per turn; a held-out (miss_func) turn has none. */
  readonly turns: readonly (readonly ChatMessage[])[];
  readonly initialConfig: PyHashDict;
  readonly involvedClasses: readonly string[];
  /** The functions offered from the first turn. */
  readonly functions: readonly FunctionDoc[];
  /** The same function docs as parsed Python values, key order and float literals kept (for prompts). */
  readonly rawFunctions: readonly PyHashDict[];
  /** miss_func: functions held back, re-offered at the start of the given turn. */
  readonly heldOut: ReadonlyMap<number, HeldOutFunctions>;
  readonly groundTruth: readonly (readonly string[])[];
  readonly longContext: boolean;
  readonly source: RecordSource;
}

export type Entry = SingleTurnEntry | MultiTurnEntry;

export interface HeldOutFunctions {
  readonly functions: readonly FunctionDoc[];
  readonly rawFunctions: readonly PyHashDict[];
}

/** A function doc both validated and as parsed Python values. */
interface LoadedDoc {
  readonly doc: FunctionDoc;
  readonly raw: PyHashDict;
}

/** The function-doc file of each multi-turn environment class, inside `multi_turn_func_doc/`. */
export const FUNC_DOC_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: "gorilla_file_system.json",
  MathAPI: "math_api.json",
  MessageAPI: "message_api.json",
  TwitterAPI: "posting_api.json",
  TicketAPI: "ticket_api.json",
  TradingBot: "trading_bot.json",
  TravelAPI: "travel_booking.json",
  VehicleControlAPI: "vehicle_control.json",
  WebSearchAPI: "web_search.json",
  MemoryAPI_kv: "memory_kv.json",
  MemoryAPI_vector: "memory_vector.json",
  MemoryAPI_rec_sum: "memory_rec_sum.json",
};

export interface Line {
  readonly text: string;
  readonly source: RecordSource;
}

/**
 * The non-blank lines of a JSON Lines file, each with its file and line for errors. Read at once:
 * an asynchronous read costs a turn of the event loop per file, which loading a category pays
 * ten times over. A file that cannot be read rejects with a RecordError.
 */
export function readLines(file: string): Promise<Line[]> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return Promise.reject(new RecordError({ file }, [{ path: "", message: `cannot read: ${(error as Error).message}` }]));
  }
  const lines: Line[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (line) lines.push({ text: line, source: { file, line: index + 1 } });
  });
  return Promise.resolve(lines);
}

function parseJson(line: Line): unknown {
  try {
    return JSON.parse(line.text) as unknown;
  } catch (error) {
    throw new RecordError(line.source, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
  }
}

/** A line read as Python's `json.loads` reads it, which must give an object (`expected` says which). */
export function parsePy(line: Line, expected = "a JSON object"): PyHashDict {
  let value: PyObject;
  try {
    value = parsePyJson(line.text);
  } catch (error) {
    if (error instanceof JsonDecodeError) throw new RecordError(line.source, [{ path: "", message: `not JSON (${error.message})` }]);
    throw error;
  }
  if (!(value instanceof PyHashDict)) throw new RecordError(line.source, [{ path: "", message: `expected ${expected}` }]);
  return value;
}

/** Whether an upstream data folder has a category's question file. */
export function hasCategory(dataDir: string, category: string): boolean {
  return existsSync(join(dataDir, questionFileName(category)));
}

/** The number of entries in a category's question file (for weighting categories that were not run). */
export async function countEntries(dataDir: string, category: string): Promise<number> {
  return (await readLines(join(dataDir, questionFileName(category)))).length;
}

/**
 * Load one category from an upstream BFCL data folder (`BFCL_v4_<category>.json` and
 * `possible_answer/`, JSON Lines despite the extension). Answers align with questions by
 * index, as upstream aligns them. Every malformed record is a `RecordError` naming its file,
 * line and field.
 */
export async function loadCategory(dataDir: string, category: string): Promise<Entry[]> {
  if (isAgentic(category)) throw new InputError(`BFCL category "${category}" is agentic (web search or memory backends) and is not supported`);
  const questionFile = join(dataDir, questionFileName(category));
  const questions = await readLines(questionFile);
  if (isRelevanceOrIrrelevance(category)) return questions.map((line) => singleTurnEntry(line, category, undefined));
  const answerFile = join(dataDir, "possible_answer", questionFileName(category));
  const answers = await readLines(answerFile);
  if (answers.length !== questions.length) {
    throw new RecordError({ file: answerFile }, [{ path: "", message: `${answers.length} answers for ${questions.length} questions in ${questionFile}` }]);
  }
  if (isMultiTurn(category)) {
    const docs = await loadFunctionDocs(dataDir);
    return questions.map((line, i) => multiTurnEntry(line, answers[i]!, category, docs));
  }
  return questions.map((line, i) => singleTurnEntry(line, category, answers[i]));
}

function singleTurnEntry(line: Line, category: string, answerLine: Line | undefined): SingleTurnEntry {
  const record = parseRecord(SingleTurnRecord, parseJson(line), line.source);
  const question = record.question[0];
  if (question === undefined) throw new RecordError(line.source, [{ path: "question", message: "has no turn" }]);
  let rawFunctions: PyHashDict[] | undefined;
  return {
    kind: "single_turn",
    id: record.id,
    category: categoryOfId(record.id) || category,
    question,
    functions: record.function,
    // Only prompts need the docs as Python values: parsing the whole line again for every
    // entry would double the cost of loading a category that is only scored.
    get rawFunctions() {
      return (rawFunctions ??= rawFunctionsOf(line));
    },
    ...(answerLine === undefined ? {} : { answer: parseSingleTurnAnswer(answerLine) }),
    source: line.source,
  };
}

function rawFunctionsOf(line: Line): PyHashDict[] {
  const raw = parsePy(line).get("function");
  return Array.isArray(raw) ? (raw as PyObject[]).filter((doc): doc is PyHashDict => doc instanceof PyHashDict) : [];
}

function groundTruthOf(line: Line): PyObject {
  const record = parsePy(line);
  if (!record.has("ground_truth")) throw new RecordError(line.source, [{ path: "ground_truth", message: "is missing" }]);
  return record.get("ground_truth")!;
}

/** `[{"func": {"param": [acceptable, ...]}}, ...]` */
function parseSingleTurnAnswer(line: Line): AnswerCall[] {
  const truth = groundTruthOf(line);
  if (!Array.isArray(truth)) throw new RecordError(line.source, [{ path: "ground_truth", message: "expected a list of calls" }]);
  return truth.map((call, i) => {
    const path = `ground_truth[${i}]`;
    if (!(call instanceof PyHashDict) || call.size !== 1)
      throw new RecordError(line.source, [{ path, message: "expected {function_name: {param: [values]}}" }]);
    const [name, params] = [...call][0]!;
    if (typeof name !== "string" || !(params instanceof PyHashDict))
      throw new RecordError(line.source, [{ path, message: "expected {function_name: {param: [values]}}" }]);
    const map = new Map<string, PyObject>();
    for (const [param, acceptable] of params) {
      if (typeof param !== "string") throw new RecordError(line.source, [{ path: `${path}.${name}`, message: "parameter names must be strings" }]);
      map.set(param, acceptable);
    }
    return { name, params: map };
  });
}

/** Every multi-turn function doc file present in the data folder, by environment class. */
async function loadFunctionDocs(dataDir: string): Promise<Map<string, LoadedDoc[]>> {
  const docs = new Map<string, LoadedDoc[]>();
  for (const [className, fileName] of Object.entries(FUNC_DOC_FILES)) {
    const file = join(dataDir, "multi_turn_func_doc", fileName);
    if (!existsSync(file)) continue;
    docs.set(
      className,
      (await readLines(file)).map((line) => loadedDoc(line)),
    );
  }
  return docs;
}

/** A doc validated now, and read as Python values only when a prompt asks for it. */
function loadedDoc(line: Line): LoadedDoc {
  let raw: PyHashDict | undefined;
  return {
    doc: parseRecord(FunctionDoc, parseJson(line), line.source),
    get raw() {
      return (raw ??= parsePy(line));
    },
  };
}

/** Docs and their Python values, the values read on first use. */
function docsOf(loaded: readonly LoadedDoc[]): HeldOutFunctions {
  let raw: PyHashDict[] | undefined;
  return {
    functions: loaded.map((l) => l.doc),
    get rawFunctions() {
      return (raw ??= loaded.map((l) => l.raw));
    },
  };
}

function multiTurnEntry(line: Line, answerLine: Line, category: string, docs: ReadonlyMap<string, LoadedDoc[]>): MultiTurnEntry {
  const record = parseRecord(MultiTurnRecord, parseJson(line), line.source);
  const config = parsePy(line).get("initial_config") ?? new PyHashDict();
  if (!(config instanceof PyHashDict)) throw new RecordError(line.source, [{ path: "initial_config", message: "expected an object" }]);
  const functions: LoadedDoc[] = [];
  for (const [index, className] of record.involved_classes.entries()) {
    const classDocs = docs.get(className);
    if (classDocs === undefined) {
      throw new RecordError(line.source, [
        {
          path: `involved_classes[${index}]`,
          message: `no function docs for "${className}" (expected multi_turn_func_doc/${FUNC_DOC_FILES[className] ?? "?"})`,
        },
      ]);
    }
    functions.push(...classDocs);
  }
  const heldOut = new Map<number, HeldOutFunctions>();
  for (const [turn, names] of Object.entries(record.missed_function ?? {})) {
    const removed: LoadedDoc[] = [];
    for (const name of names) {
      const index = functions.findIndex((loaded) => loaded.doc.name === name);
      if (index >= 0) removed.push(...functions.splice(index, 1));
    }
    heldOut.set(Number(turn), docsOf(removed));
  }
  const truth = groundTruthOf(answerLine);
  const groundTruth = Array.isArray(truth)
    ? truth.map((turn) => (Array.isArray(turn) && turn.every((c) => typeof c === "string") ? turn : undefined))
    : undefined;
  if (groundTruth === undefined || groundTruth.includes(undefined)) {
    throw new RecordError(answerLine.source, [{ path: "ground_truth", message: "expected a list of turns, each a list of call strings" }]);
  }
  if (groundTruth.length !== record.question.length) {
    throw new RecordError(answerLine.source, [{ path: "ground_truth", message: `${groundTruth.length} turns for ${record.question.length} question turns` }]);
  }
  const id = record.id;
  const entryCategory = categoryOfId(id) || category;
  const offered = docsOf(functions);
  return {
    kind: "multi_turn",
    id,
    category: entryCategory,
    turns: record.question,
    initialConfig: config,
    involvedClasses: record.involved_classes,
    functions: offered.functions,
    get rawFunctions() {
      return offered.rawFunctions;
    },
    heldOut,
    groundTruth: groundTruth as string[][],
    longContext: isLongContext(entryCategory),
    source: line.source,
  };
}
