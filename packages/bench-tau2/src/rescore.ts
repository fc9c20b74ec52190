import { EnvaceError } from "@envace/errors";
import { readFile } from "node:fs/promises";
import { InputError, parseRecord, RecordError } from "@envace/protocol";
import { parseJsonLines, parsePyJsonLine, parsePyJsonText } from "@envace/records";
import { z } from "zod";
import type { Tau2Environment } from "./environment.js";
import { Tau2Evaluator, type NlAssertionJudge } from "./evaluate.js";
import type { Tau2Domain } from "./load.js";
import { pyModel, pyOptional } from "./python/schema.js";
import { summarize, toEntry, type Tau2RunResult } from "./run.js";
import { Tau2Message } from "./task.js";

/** A saved simulation that fails to evaluate or replay; the message names it and the cause says why. */
export class RescoreError extends EnvaceError {
  override readonly code = "rescore";
}

/** A saved conversation: a line of our `simulations.jsonl`, or a simulation of upstream's `results.json`. */
export const SavedSimulation = pyModel({
  id: z.string(),
  task_id: z.string(),
  trial: pyOptional(z.union([z.bigint().transform(Number), z.number().int()])),
  termination_reason: z.string(),
  messages: z.array(Tau2Message),
});
export type SavedSimulation = z.infer<typeof SavedSimulation>;

/**
 * Read saved conversations: JSON Lines of simulations (this package's `simulations.jsonl`) or
 * an upstream results file (`{"simulations": [...]}`). Errors name the file, line and field.
 */
export async function loadSimulations(file: string): Promise<SavedSimulation[]> {
  const text = await readFile(file, "utf8");
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") && !trimmed.includes("\n{")) {
    const value = parsePyJsonText(trimmed, file);
    const simulations = value instanceof Map ? value.get("simulations") : undefined;
    if (!Array.isArray(simulations)) {
      if (value instanceof Map && value.has("messages")) return [parseRecord(SavedSimulation, value, { file })];
      throw new RecordError({ file }, [{ path: "simulations", message: "expected a list of simulations" }]);
    }
    return simulations.map((item, index) => parseRecord(SavedSimulation, item, { file, record: index }));
  }
  // The user's file: a cut-short last line is an error, not dropped, so a rescore never quietly scores fewer conversations than were saved.
  return parseJsonLines(SavedSimulation, text, file, { source: "user", parse: parsePyJsonLine });
}

export interface RescoreOptions {
  readonly judge?: NlAssertionJudge;
  /** Throw when a replayed write answers differently than recorded. Default false, as upstream re-grades. */
  readonly strictReplay?: boolean;
  readonly agent?: string;
  readonly signal?: AbortSignal;
}

/**
 * Score saved conversations again with this evaluator: each conversation's writes are replayed
 * on a fresh environment, so a run made here or upstream gets the reward this package gives.
 */
export async function rescore(domain: Tau2Domain, simulations: readonly SavedSimulation[], options: RescoreOptions = {}): Promise<Tau2RunResult> {
  const evaluator = new Tau2Evaluator(domain, {
    ...(options.judge === undefined ? {} : { judge: options.judge }),
    strictReplay: options.strictReplay ?? false,
  });
  const tasks = new Map(domain.tasks.map((task) => [task.id, task]));
  const entries = [];
  for (const simulation of simulations) {
    const task = tasks.get(simulation.task_id);
    if (task === undefined) throw new InputError(`simulation ${simulation.id}: no task "${simulation.task_id}" in the ${domain.definition.name} tasks`);
    const termination = simulation.termination_reason;
    let reward;
    let replayed: Tau2Environment;
    try {
      reward = termination === "infrastructure_error" ? undefined : await evaluator.evaluate(task, simulation.messages, termination, options.signal);
      replayed = evaluator.replay(task, simulation.messages);
    } catch (error) {
      throw new RescoreError(`simulation ${simulation.id} (task ${simulation.task_id}): ${(error as Error).message}`, { cause: error });
    }
    entries.push(
      toEntry(
        task,
        {
          trial: simulation.trial ?? 0,
          termination_reason: termination,
          messages: simulation.messages,
          db_hash: replayed.dbHash(),
          user_db_hash: replayed.userDbHash(),
        },
        reward,
      ),
    );
  }
  const trials = Math.max(0, ...[...countBy(entries.map((entry) => entry.id)).values()]);
  const summary = summarize(entries, {
    domain: domain.definition.name,
    agent: options.agent ?? "saved",
    tasks: new Set(entries.map((e) => e.id)).size,
    trials,
  });
  return { entries, summary };
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
