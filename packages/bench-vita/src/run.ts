import { ConcurrencyLimit } from "@envace/concurrency";
import { SamplingParams, type Environment, type Message, type Policy, type Task, type ToolCall, type ToolResult, type Trajectory } from "@envace/protocol";
import { fromJson, pyRepr } from "@envace/python-text";
import { EvalRun } from "@envace/records";
import { rehearseThenCommit } from "@envace/rehearsal";
import { VerdictParseError } from "@envace/rewards";
import { simulateUser, type UserTurnSource } from "@envace/trajectory";
import OpenAI from "openai";
import { z } from "zod";
import { VitaEnvironment } from "./environment.js";
import { evaluateTrial, WINDOW_RESPONSE_FORMAT, type VitaJudge, type VitaMessage, type VitaTermination } from "./evaluate.js";
import { vitaMetrics, type VitaMetrics } from "./metrics.js";
import { STOP_MARKER, toProtocolTask } from "./protocol-task.js";
import type { VitaTask } from "./task.js";
import { USER_SYSTEM_PROMPT } from "./user-prompt.js";

/** Upstream's first agent message, sent before any model speaks. */
export const FIRST_AGENT_MESSAGE = "Hello, how can I help you?";

/** The user simulator's system prompt: upstream's, with the task's persona (`str(user_profile)`) and instructions. */
export function userSystemPrompt(task: VitaTask): string {
  // Function replacements: a task's text may hold "$&" and the like.
  return USER_SYSTEM_PROMPT.replace("{persona}", () => pyRepr(fromJson(task.userProfile as never))).replace("{instructions}", () => task.instructions);
}

/** A judge behind an OpenAI-compatible server, answering with the strict JSON schema. */
export function openAiJudge(baseURL: string, model: string, options: { apiKey?: string; timeoutMs?: number } = {}): VitaJudge {
  const client = new OpenAI({ baseURL, apiKey: options.apiKey ?? "EMPTY", maxRetries: 0, timeout: options.timeoutMs ?? 120_000 });
  return async ({ system, user }) => {
    const response = await client.chat.completions.create({
      model,
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
      temperature: 0,
      response_format: WINDOW_RESPONSE_FORMAT,
    });
    const content = response.choices[0]?.message.content;
    if (typeof content !== "string") throw new VerdictParseError("the judge answered without content");
    return content;
  };
}

/** One scored trial in `entries.jsonl`. */
export const VitaRunEntry = z.object({
  id: z.string(),
  trial: z.number().int(),
  reward: z.number().nullable(),
  rubric_score: z.number().nullable(),
  masked: z.string().optional(),
  termination: z.string(),
  rubrics: z.array(z.object({ rubric: z.string(), justification: z.string(), meetExpectation: z.boolean() })),
  db_hash: z.string(),
  messages: z.number().int(),
  rehearsal: z.string(),
  /** Calls that reached the real environment before the committed run began (0 by design). */
  real_calls_during_rehearsal: z.number().int(),
  real_calls: z.number().int(),
});
export type VitaRunEntry = z.infer<typeof VitaRunEntry>;

export interface RunVitaOptions {
  readonly tasks: readonly VitaTask[];
  readonly policy: Policy;
  readonly user: Policy;
  readonly judge: VitaJudge;
  readonly trials: number;
  readonly out: string;
  /** `none` (default), `parallel:N` or `sequential:N`. */
  readonly rehearsal?: string;
  readonly concurrency?: number;
  /** Agent turns before the conversation is cut (upstream: 100 messages). */
  readonly maxTurns?: number;
  /** Tool errors before the conversation is cut (upstream: 10). */
  readonly maxErrors?: number;
  readonly judgeAttempts?: number;
  readonly onEntry?: (entry: VitaRunEntry) => void;
  /** The run directory's one-line notices (a resumed run, a torn last line). Default: a process warning. */
  readonly notify?: (line: string) => void;
}

export interface VitaSummary extends VitaMetrics {
  readonly tasks: number;
  readonly trials: number;
  readonly scored: number;
  readonly masked: number;
  readonly rehearsal: string;
  readonly realCallsDuringRehearsal: number;
}

/** Counts the calls that reach the real environment, and which of them came before the commit. */
class CountingEnvironment implements Environment {
  calls = 0;
  callsBeforeCommit = 0;
  committed = false;
  constructor(private readonly inner: VitaEnvironment) {}
  reset(task: Task): Promise<void> {
    return this.inner.reset(task);
  }
  tools(): ReturnType<Environment["tools"]> {
    return this.inner.tools();
  }
  call(call: ToolCall): Promise<ToolResult> {
    this.calls++;
    if (!this.committed) this.callsBeforeCommit++;
    return this.inner.call(call);
  }
  state(): ReturnType<Environment["state"]> {
    return this.inner.state();
  }
  hash(): string {
    return this.inner.db.hash();
  }
}

const TERMINATIONS: Readonly<Record<string, VitaTermination>> = {
  agent_stop: "agent_stop",
  user_stop: "user_stop",
  max_turns: "max_steps",
  tool_error: "too_many_errors",
  parse_error: "invalid_agent_message",
  max_tokens: "invalid_agent_message",
  env_error: "invalid_agent_message",
};

/** The conversation as the evaluator reads it: greeting, user turns, agent replies with their calls, tool results. */
export function conversationOf(start: readonly Message[], trajectory: Trajectory): VitaMessage[] {
  const messages: VitaMessage[] = start.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }));
  for (const step of trajectory.steps) {
    if (step.type === "user") {
      messages.push({ role: "user", content: step.message.content });
      continue;
    }
    messages.push({
      role: "assistant",
      content: step.message.content,
      toolCalls: step.outcomes.map((o) => ({ name: o.call.name, arguments: o.call.arguments })),
    });
    for (const outcome of step.outcomes) {
      const result = outcome.result;
      messages.push({
        role: "tool",
        content: result.status === "ok" ? (typeof result.content === "string" ? result.content : JSON.stringify(result.content)) : result.error.message,
      });
    }
  }
  return messages;
}

async function runTrial(options: RunVitaOptions, task: VitaTask, trial: number): Promise<VitaRunEntry> {
  const environment = new CountingEnvironment(new VitaEnvironment(new Map([[task.id, task]])));
  const base = toProtocolTask(task);
  const greeting: Message[] = [...base.messages, { role: "assistant", content: FIRST_AGENT_MESSAGE }];
  const users: UserTurnSource = simulateUser({
    policy: options.user,
    instructions: userSystemPrompt(task),
    scenario: () => "As in <persona> and <instructions> above.",
    stopMarkers: [STOP_MARKER],
  });
  const sampling = SamplingParams.parse({ temperature: 0.6, topP: 0.95 });
  const opening = await users.next({ task: { ...base, messages: greeting }, messages: greeting, steps: [], sampling });
  const rehearsal = options.rehearsal ?? "none";
  const entry = (fields: Pick<VitaRunEntry, "reward" | "rubric_score" | "termination" | "rubrics" | "messages"> & { masked?: string }): VitaRunEntry => ({
    id: task.id,
    trial,
    ...fields,
    db_hash: environment.hash(),
    rehearsal,
    real_calls_during_rehearsal: environment.callsBeforeCommit,
    real_calls: environment.calls,
  });
  await environment.reset(base);
  if (opening.kind !== "message") {
    return entry({
      reward: null,
      rubric_score: null,
      termination: "user_stop",
      rubrics: [],
      messages: 2,
      masked: "the user ended the conversation before it began",
    });
  }
  const task0: Task = { ...base, messages: [...greeting, opening.step.message] };
  const episode = await rehearseThenCommit({
    task: task0,
    policy: options.policy,
    environment,
    setting: rehearsal,
    users,
    limits: { maxTurns: options.maxTurns ?? 50, ...(options.maxErrors === undefined ? { maxToolErrors: 10 } : { maxToolErrors: options.maxErrors }) },
    onRehearsed: () => {
      environment.committed = true;
    },
  });
  const trajectory = episode.committed.trajectory;
  const termination = TERMINATIONS[trajectory.termination.reason] ?? "invalid_agent_message";
  const messages = conversationOf(task0.messages, trajectory);
  const verdict = await evaluateTrial({
    task,
    messages,
    termination,
    judge: options.judge,
    ...(options.judgeAttempts === undefined ? {} : { maxAttempts: options.judgeAttempts }),
  });
  return entry({
    reward: verdict.reward,
    rubric_score: verdict.rubricScore,
    termination,
    rubrics: verdict.rubrics.map((r) => ({ rubric: r.rubric, justification: r.justification, meetExpectation: r.meetExpectation })),
    messages: messages.length,
    ...(verdict.masked === undefined ? {} : { masked: verdict.masked }),
  });
}

/** What decides a trial's result, which a run directory must have been made with to be resumed (tasks and trials may change). */
function runOptions(options: RunVitaOptions): Record<string, unknown> {
  return {
    benchmark: "vita",
    policy: options.policy.id,
    user: options.user.id,
    rehearsal: options.rehearsal ?? "none",
    maxTurns: options.maxTurns ?? 50,
    maxErrors: options.maxErrors ?? 10,
    judgeAttempts: options.judgeAttempts,
  };
}

/**
 * Run every task `trials` times: the simulated user opens after upstream's greeting, the agent
 * (after a private rehearsal, if asked) works against the real environment until someone stops
 * or a limit is hit, and the judge scores the conversation. `out` is an evaluation's run
 * directory (`@envace/records`' `EvalRun`): entries are appended to `entries.jsonl` as trials
 * finish, a rerun with the same options resumes, and `summary.json` holds the metrics.
 */
export async function runVita(options: RunVitaOptions): Promise<VitaSummary> {
  const run = EvalRun.open({
    out: options.out,
    options: runOptions(options),
    entry: VitaRunEntry,
    key: (e) => JSON.stringify([e.id, e.trial]),
    notify: options.notify,
  });
  const asked = options.tasks.flatMap((task) => Array.from({ length: options.trials }, (_, trial) => ({ task, trial, key: JSON.stringify([task.id, trial]) })));
  const pending = new Set(run.start(asked.map((job) => job.key)));
  const limit = new ConcurrencyLimit(options.concurrency ?? 4);
  const fresh: VitaRunEntry[] = [];
  await Promise.all(
    asked
      .filter((job) => pending.has(job.key))
      .map(({ task, trial }) =>
        limit.run(async () => {
          const entry = await runTrial(options, task, trial);
          run.append(entry);
          fresh.push(entry);
          options.onEntry?.(entry);
        }),
      ),
  );
  const all = [...asked.flatMap((job) => run.done.get(job.key) ?? []), ...fresh];
  const scored = all.filter((e) => e.reward !== null);
  const summary: VitaSummary = {
    tasks: options.tasks.length,
    trials: options.trials,
    scored: scored.length,
    masked: all.length - scored.length,
    rehearsal: options.rehearsal ?? "none",
    realCallsDuringRehearsal: all.reduce((sum, e) => sum + e.real_calls_during_rehearsal, 0),
    ...vitaMetrics(
      scored.map((e) => ({ taskId: e.id, reward: e.reward! })),
      options.trials,
    ),
  };
  run.writeSummary(summary);
  return summary;
}
