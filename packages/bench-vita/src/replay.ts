import { JsonObject, RecordError } from "@envace/protocol";
import type { PyValue } from "@envace/python-text";
import { EvalRun, parseJsonLines, parsePyJsonText, readText } from "@envace/records";
import { z } from "zod";
import type { VitaDomain } from "./db.js";
import { replayCalls } from "./environment.js";
import { loadVitaTasks, resolveTasksFile, type VitaTask } from "./task.js";

/** One line of a calls file: a task id and the calls to send, in the conformance labels' own format. */
export const ReplayLine = z.object({
  id: z.string().min(1),
  calls: z.array(z.object({ name: z.string().min(1), arguments: JsonObject })),
});
export type ReplayLine = z.infer<typeof ReplayLine>;

/** One line of `entries.jsonl`: what the environment answered, and the DB hash after the last call. */
export const ReplayEntry = z.object({
  id: z.string(),
  calls: z.array(z.object({ content: z.string(), error: z.boolean() })),
  initial_db_hash: z.string(),
  db_hash: z.string(),
});
export type ReplayEntry = z.infer<typeof ReplayEntry>;

/** A calls file's task ids and calls, the arguments as Python read them (so `2.0` stays a float). */
export interface ReplayRequest {
  readonly id: string;
  readonly calls: readonly { readonly name: string; readonly arguments: PyValue }[];
  /** The request's line in the calls file. */
  readonly line: number;
}

/** Read a calls file (JSON Lines); a bad line is named by its line number and field. */
export async function readReplayFile(file: string): Promise<ReplayRequest[]> {
  const text = await readText(file);
  parseJsonLines(ReplayLine, text, file, { source: "user" });
  const requests: ReplayRequest[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const exact = parsePyJsonText(line, file, index + 1) as Map<string, PyValue>;
    const calls = (exact.get("calls") as Map<string, PyValue>[]).map((call) => ({ name: call.get("name") as string, arguments: call.get("arguments")! }));
    requests.push({ id: exact.get("id") as string, calls, line: index + 1 });
  });
  return requests;
}

export interface ReplayOptions {
  readonly domain: VitaDomain;
  /** The VitaBench data folder (holding `<domain>/tasks_en.json`) or the domain folder. */
  readonly data: string;
  /** The calls file. */
  readonly replay: string;
  /** The run directory (`@envace/records`' `EvalRun`): `entries.jsonl` there is appended to, so a rerun resumes. */
  readonly out: string;
  /** The run directory's one-line notices (a resumed run, a torn last line). Default: a process warning. */
  readonly notify?: (line: string) => void;
}

export interface ReplaySummary {
  readonly tasks: number;
  readonly calls: number;
  readonly errors: number;
  /** Tasks already in `entries.jsonl`, not replayed again. */
  readonly kept: number;
  readonly entries: string;
}

/**
 * Replay each listed task's calls on a fresh environment built from the task and append one entry
 * per task to `<out>/entries.jsonl`. Every line of the calls file is checked, and every id matched
 * to a task, before anything is written.
 */
export async function replayFile(options: ReplayOptions): Promise<ReplaySummary> {
  const tasksFile = resolveTasksFile(options.data, options.domain);
  const [tasks, requests] = await Promise.all([loadVitaTasks(tasksFile, options.domain), readReplayFile(options.replay)]);
  const byId = new Map<string, VitaTask>(tasks.map((task) => [task.id, task]));
  for (const request of requests) {
    if (!byId.has(request.id))
      throw new RecordError({ file: options.replay, line: request.line }, [{ path: "id", message: `no task "${request.id}" in ${tasksFile}` }]);
  }
  // What is replayed decides the answers: the domain's tasks and the calls, both read above.
  const run = EvalRun.open({
    out: options.out,
    options: { benchmark: "vita-replay", domain: options.domain },
    entry: ReplayEntry,
    key: (entry) => entry.id,
    notify: options.notify,
  });
  const pending = new Set(run.start(requests.map((request) => request.id)));
  const done = new Set<string>();
  const kept = requests.filter((request) => !pending.has(request.id)).length;
  let calls = 0;
  let errors = 0;
  for (const request of requests) {
    if (!pending.has(request.id) || done.has(request.id)) continue;
    const result = replayCalls(byId.get(request.id)!, request.calls);
    calls += result.calls.length;
    errors += result.calls.filter((call) => call.error).length;
    run.append({
      id: request.id,
      calls: result.calls.map(({ content, error }) => ({ content, error })),
      initial_db_hash: result.initialHash,
      db_hash: result.finalHash,
    } satisfies ReplayEntry);
    done.add(request.id);
  }
  return { tasks: requests.length, calls, errors, kept, entries: run.entriesFile };
}
