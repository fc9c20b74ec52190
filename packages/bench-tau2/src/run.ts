import { InputError, type Policy, type SamplingParamsInput } from "@envace/protocol";
import { jsonLoads, pyDumps } from "@envace/python-text";
import { EvalRun, readJsonLines, sha256Hex, type JsonLinesFile } from "@envace/records";
import { passHatKs } from "@envace/rewards";
import { z } from "zod";
import { Tau2Environment } from "./environment.js";
import { isSuccess, Tau2Evaluator, type NlAssertionJudge, type Tau2RewardInfo } from "./evaluate.js";
import type { Tau2Domain, UserGuidelines } from "./load.js";
import { oracle } from "./oracle.js";
import { simulate, type Tau2Simulation } from "./simulate.js";
import { isSoloTask, soloOracle } from "./solo.js";
import type { Tau2Message, Tau2Task } from "./task.js";

/** One line of a run's `entries.jsonl`: one trial of one task. */
export const Tau2Entry = z.object({
  id: z.string(),
  trial: z.number().int().nonnegative(),
  /** The task's reward, or null when it could not be scored (masked, infrastructure error). */
  reward: z.number().nullable(),
  success: z.boolean(),
  termination: z.string(),
  /** The final `get_db_hash()` of the conversation's environment. */
  db_hash: z.string(),
  /** The final `get_user_db_hash()`: the user's device in dual-control domains, null in the others. */
  user_db_hash: z.string().nullable(),
  /**
   * Every tool call in the order executed, the agent's (`requestor: assistant`) and the user's
   * on their own device (`user`), with the exact response and whether it was an error.
   */
  calls: z.array(z.object({ name: z.string(), requestor: z.enum(["assistant", "user"]), content: z.string(), error: z.boolean() })),
  /**
   * Upstream's DB check (`db_check.db_match`): both hashes of the conversation's replayed state
   * equal those the gold actions reach, replayed as upstream's evaluator does, with no sync
   * between them. Null when it did not run (no actions or assertions, or not scored).
   */
  db_match: z.boolean().nullable(),
  /** Each environment assertion of the task, in order, with its result (`met`) on the final state. */
  assertions: z.array(z.object({ func_name: z.string(), env_type: z.enum(["assistant", "user"]), result: z.boolean() })),
  /** The reward of each component of the task's reward basis. */
  components: z.record(z.string(), z.number()),
  masked: z.string().optional(),
  error: z.string().optional(),
});
export type Tau2Entry = z.infer<typeof Tau2Entry>;

/** A run's `summary.json`. */
export interface Tau2Summary {
  readonly domain: string;
  readonly agent: string;
  readonly tasks: number;
  readonly trials: number;
  /** Trials scored (masked and infrastructure failures excluded). */
  readonly scored: number;
  readonly successes: number;
  readonly avg_reward: number;
  /** pass^1 … pass^k averaged over tasks. */
  readonly pass_hat_k: Record<string, number>;
  /** Scored trials whose DB component was 1 (among those with a DB check). */
  readonly db_match: { readonly matched: number; readonly checked: number };
  readonly masked: number;
  readonly infrastructure_errors: number;
  readonly terminations: Record<string, number>;
}

/** Who plays a task: the agent and the user simulator (policies), or the oracle. */
export type Participants = "oracle" | { readonly agent: Policy; readonly user: Policy };

export interface RunTau2Options {
  readonly domain: Tau2Domain;
  readonly guidelines: UserGuidelines;
  readonly participants: Participants;
  /** Trials per task (k of pass^k). Default 1. */
  readonly trials?: number;
  /**
   * Run only these tasks (default: every task of the domain). In solo mode only the tasks
   * upstream's solo agent accepts run (`isSoloTask`); naming another is an error.
   */
  readonly taskIds?: readonly string[];
  /** Conversations in flight at once. Default 1. */
  readonly concurrency?: number;
  readonly judge?: NlAssertionJudge;
  readonly sampling?: { readonly agent?: SamplingParamsInput; readonly user?: SamplingParamsInput };
  /** Trial t samples with seed `seed + t` (when given). */
  readonly seed?: number;
  readonly maxSteps?: number;
  readonly maxErrors?: number;
  readonly agentInstruction?: string;
  /**
   * The run directory (`@envace/records`' `EvalRun`): `options.json`, `entries.jsonl` and
   * `simulations.jsonl` (one line per trial as it finishes), `summary.json` at the end. A folder
   * made with the same options resumes: trials already in `entries.jsonl` are not run again.
   * One made with other options is refused (`RunDirectoryError`).
   */
  readonly out?: string;
  /** The run directory's one-line notices (a resumed run, a torn last line). Default: a process warning. */
  readonly notify?: (line: string) => void;
  readonly onProgress?: (progress: { done: number; total: number; entry: Tau2Entry }) => void;
  readonly signal?: AbortSignal;
}

export interface Tau2RunResult {
  readonly entries: Tau2Entry[];
  readonly summary: Tau2Summary;
}

/** Run every (task, trial) of a domain, score it, and write the run directory. */
export async function runTau2(options: RunTau2Options): Promise<Tau2RunResult> {
  const { domain } = options;
  const trials = options.trials ?? 1;
  const tasks = selectTasks(domain, options.taskIds);
  const evaluator = new Tau2Evaluator(domain, { ...(options.judge === undefined ? {} : { judge: options.judge }), strictReplay: true });
  const agentId = options.participants === "oracle" ? "oracle" : options.participants.agent.id;
  const name = domainLabel(domain);

  const files = options.out === undefined ? undefined : openRunDir(options.out, runOptions(options, name, agentId), options.notify);
  const keyOf = (id: string, trial: number): string => JSON.stringify([id, trial]);
  const asked = tasks.flatMap((task) => Array.from({ length: trials }, (_, trial) => ({ task, trial })));
  const keys = asked.map(({ task, trial }) => keyOf(task.id, trial));
  const pending = new Set(files === undefined ? keys : files.run.start(keys));
  const entries: Tau2Entry[] = files === undefined ? [] : [...files.run.done.values()];
  const queue = asked.filter(({ task, trial }) => pending.has(keyOf(task.id, trial)));
  const total = asked.length;
  let finished = 0;

  const worker = async (): Promise<void> => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      options.signal?.throwIfAborted();
      const { task, trial } = job;
      const players =
        options.participants !== "oracle" ? options.participants : domain.solo ? { agent: soloOracle(task), user: soloOracle(task) } : oracle(task);
      const seed = options.seed === undefined ? {} : { seed: options.seed + trial };
      const simulation = await simulate({
        environment: new Tau2Environment(domain),
        task,
        agent: players.agent,
        user: players.user,
        guidelines: options.guidelines,
        trial,
        sampling: { agent: { ...options.sampling?.agent, ...seed }, user: { ...options.sampling?.user, ...seed } },
        ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
        ...(options.maxErrors === undefined ? {} : { maxErrors: options.maxErrors }),
        ...(options.agentInstruction === undefined ? {} : { agentInstruction: options.agentInstruction }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      const reward =
        simulation.termination_reason === "infrastructure_error"
          ? undefined
          : await evaluator.evaluate(task, simulation.messages, simulation.termination_reason, options.signal);
      const entry = toEntry(task, simulation, reward);
      entries.push(entry);
      files?.run.append(entry);
      files?.simulations.append(saveSimulation(simulation, reward));
      finished++;
      options.onProgress?.({ done: total - pending.size + finished, total, entry });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => worker()));

  // The summary covers the trials asked for; the run directory may hold more.
  const wanted = new Set(keys);
  const ordered = entries.filter((entry) => wanted.has(keyOf(entry.id, entry.trial))).sort((a, b) => order(tasks, a) - order(tasks, b) || a.trial - b.trial);
  const summary = summarize(ordered, { domain: name, agent: agentId, tasks: tasks.length, trials });
  files?.run.writeSummary(summary);
  return { entries: ordered, summary };
}

function order(tasks: readonly Tau2Task[], entry: Tau2Entry): number {
  return tasks.findIndex((task) => task.id === entry.id);
}

function selectTasks(domain: Tau2Domain, ids: readonly string[] | undefined): Tau2Task[] {
  if (ids === undefined) return domain.tasks.filter((task) => !domain.solo || isSoloTask(task));
  return ids.map((id) => {
    const task = domain.tasks.find((candidate) => candidate.id === id);
    if (task === undefined) throw new InputError(`no task "${id}" in the ${domain.definition.name} tasks`);
    if (domain.solo && !isSoloTask(task))
      throw new InputError(`task "${id}" cannot run in solo mode (it needs a ticket and gold actions, and no user message in its history)`);
    return task;
  });
}

/**
 * The domain as a run names it: upstream's name for the policy variant (`telecom-workflow`),
 * then `solo` for solo mode, so a run directory never mixes modes.
 */
export function domainLabel(domain: Pick<Tau2Domain, "definition" | "solo" | "variant">): string {
  const variant = domain.variant === undefined || domain.variant === "manual" ? "" : `-${domain.variant}`;
  return `${domain.definition.name}${variant}${domain.solo ? " solo" : ""}`;
}

/** The run directory and the conversations file it appends to as trials finish. */
interface RunFiles {
  readonly run: EvalRun<Tau2Entry>;
  /** Lines of upstream's Python JSON, already serialized. */
  readonly simulations: JsonLinesFile<unknown, string>;
}

/**
 * What decides a trial's result, which a run directory must have been made with to be resumed
 * (the tasks and trials asked for may change).
 */
function runOptions(options: RunTau2Options, domain: string, agent: string): Record<string, unknown> {
  return {
    benchmark: "tau2",
    domain,
    agent,
    user: options.participants === "oracle" ? "oracle" : options.participants.user.id,
    judge: options.judge !== undefined,
    sampling: options.sampling ?? {},
    seed: options.seed,
    maxSteps: options.maxSteps,
    maxErrors: options.maxErrors,
    agentInstruction: options.agentInstruction === undefined ? undefined : sha256Hex(options.agentInstruction),
  };
}

/** Open the run directory under `@envace/records`' rule for an evaluation's run directory. */
function openRunDir(out: string, runOptions: Record<string, unknown>, notify: ((line: string) => void) | undefined): RunFiles {
  const run = EvalRun.open({ out, options: runOptions, entry: Tau2Entry, key: (entry) => JSON.stringify([entry.id, entry.trial]), notify });
  return { run, simulations: run.open("simulations.jsonl", z.unknown(), { parse: jsonLoads, serialize: (line: string) => line }) };
}

/** Read a run's `entries.jsonl`; a last line cut short by a crash is dropped with a warning. */
export function readEntries(file: string): Tau2Entry[] {
  return readJsonLines(file, Tau2Entry, { source: "own" });
}

/** The entry of one scored (or unscorable) trial; `calls` are those made after the task's message history. */
export function toEntry(
  task: Tau2Task,
  simulation: Pick<Tau2Simulation, "trial" | "messages" | "db_hash" | "user_db_hash" | "error"> & { termination_reason: string },
  reward: Tau2RewardInfo | undefined,
): Tau2Entry {
  const skip = task.initial_state?.message_history?.length ?? 0;
  const value = reward === undefined || reward.masked !== undefined ? null : reward.reward;
  return {
    id: task.id,
    trial: simulation.trial,
    reward: value,
    success: value !== null && isSuccess(value),
    termination: simulation.termination_reason,
    db_hash: simulation.db_hash,
    user_db_hash: simulation.user_db_hash,
    db_match: reward?.db?.match ?? null,
    calls: callsOf(simulation.messages, skip),
    assertions: (reward?.envAssertions ?? []).map(({ assertion, met }) => ({ func_name: assertion.func_name, env_type: assertion.env_type, result: met })),
    components: { ...(reward?.breakdown ?? {}) },
    ...(reward?.masked === undefined ? {} : { masked: reward.masked }),
    ...(simulation.error === undefined ? {} : { error: simulation.error }),
  };
}

function callsOf(messages: readonly Tau2Message[], skip: number): Tau2Entry["calls"] {
  const names = new Map<string, string>();
  const calls: Tau2Entry["calls"] = [];
  for (const [index, message] of messages.entries()) {
    if ((message.role === "assistant" || message.role === "user") && message.tool_calls !== null) {
      for (const call of message.tool_calls) names.set(call.id, call.name);
    }
    if (index >= skip && message.role === "tool") {
      calls.push({ name: names.get(message.id) ?? "", requestor: message.requestor, content: message.content ?? "", error: message.error });
    }
  }
  return calls;
}

/** One line of `simulations.jsonl`: upstream's `SimulationRun` fields, arguments exactly as written. */
export function saveSimulation(simulation: Tau2Simulation, reward: Tau2RewardInfo | undefined): string {
  const record = new Map<string, unknown>([
    ["id", simulation.id],
    ["task_id", simulation.task_id],
    ["trial", BigInt(simulation.trial)],
    ["termination_reason", simulation.termination_reason],
    ["db_hash", simulation.db_hash],
    ["messages", simulation.messages],
  ]);
  if (simulation.error !== undefined) record.set("error", simulation.error);
  if (reward !== undefined) record.set("reward", reward.masked === undefined ? reward.reward : null);
  return pyDumps(record as Parameters<typeof pyDumps>[0]);
}

/** Averages and pass^k over the scored trials (masked and infrastructure failures left out). */
export function summarize(entries: readonly Tau2Entry[], run: { domain: string; agent: string; tasks: number; trials: number }): Tau2Summary {
  const scored = entries.filter((entry) => entry.reward !== null);
  const terminations = Object.create(null) as Record<string, number>;
  for (const entry of entries) terminations[entry.termination] = (terminations[entry.termination] ?? 0) + 1;
  const passes = passHatKs(scored.map((entry) => ({ taskId: entry.id, success: entry.success })));
  // Upstream's DB check runs on every scored task with actions or assertions, whatever its reward basis.
  const checked = scored.filter((entry) => entry.db_match !== null);
  return {
    ...run,
    scored: scored.length,
    successes: scored.filter((entry) => entry.success).length,
    avg_reward: scored.length === 0 ? 0 : scored.reduce((sum, entry) => sum + entry.reward!, 0) / scored.length,
    pass_hat_k: Object.fromEntries(Object.entries(passes).map(([k, value]) => [`pass^${k}`, value])),
    db_match: { matched: checked.filter((entry) => entry.db_match === true).length, checked: checked.length },
    masked: entries.filter((entry) => entry.masked !== undefined).length,
    infrastructure_errors: entries.filter((entry) => entry.termination === "infrastructure_error").length,
    terminations,
  };
}

/** The summary as a few lines for a terminal. */
export function formatSummary(summary: Tau2Summary): string {
  const percent = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `τ² ${summary.domain} · ${summary.agent} · ${summary.tasks} tasks × ${summary.trials} trial${summary.trials === 1 ? "" : "s"}`,
    `  scored ${summary.scored}, succeeded ${summary.successes}, average reward ${summary.avg_reward.toFixed(4)}`,
    `  ${Object.entries(summary.pass_hat_k)
      .map(([k, value]) => `${k} ${percent(value)}`)
      .join("  ")}`,
    `  DB match ${summary.db_match.matched}/${summary.db_match.checked}`,
    `  endings: ${Object.entries(summary.terminations)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(", ")}`,
  ];
  if (summary.masked > 0) lines.push(`  masked, not scored (no NL_ASSERTION verdict: give a judge): ${summary.masked}`);
  if (summary.infrastructure_errors > 0) lines.push(`  infrastructure errors (not scored): ${summary.infrastructure_errors}`);
  return lines.join("\n");
}
