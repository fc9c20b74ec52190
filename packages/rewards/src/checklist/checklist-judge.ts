import { EnvaceError } from "@envace/errors";
import { abortReason, ConcurrencyLimit } from "@envace/concurrency";
import type { ChecklistItem, RewardVerdict, Task, UserMessage } from "@envace/protocol";
import type OpenAI from "openai";
import { masked, type RewardFunction, scored } from "../reward.js";
import { aggregateTurnItems, combineGates, type DependenceMode, episodeScore, type GateRule } from "./aggregate.js";
import { splitAssistant } from "./assistant-parts.js";
import { JudgeCallLog, type JudgeCallRecord } from "./call-log.js";
import { type Dialogue, DialogueError, type DialogueSource, toDialogue, turnMessages } from "./dialogue.js";
import type { RetryOptions } from "@envace/http";
import { callJudge, defaultJudgeRetry, type JudgeCallResult, judgeRequestKey, type JudgeSampling } from "./judge-client.js";
import { type ChecklistStepView, decodeToolCall, predicateFor, type ProgrammaticItems } from "./predicates.js";
import { buildJudgePrompt, type JudgePromptInput, type RenderOptions } from "./prompt.js";
import { VerdictCache, type VerdictStore } from "./verdict-cache.js";

/** A task without the checklists the judge scores against. */
export class ChecklistError extends EnvaceError {
  override readonly code = "checklist";
}

export interface ChecklistJudgeOptions {
  /** Any OpenAI-compatible server (vLLM, SGLang, llama.cpp, OpenAI). Its own retries are switched off per call. */
  client: OpenAI;
  model: string;
  /** Defaults to `{ temperature: 0 }`. Part of the cache key. */
  sampling?: JudgeSampling;
  retry?: Partial<RetryOptions>;
  /** Per HTTP attempt. Default 120 s. */
  timeoutMs?: number;
  /** Judge calls in flight at once, across everything this judge scores. Default 16. */
  concurrency?: number;
  /**
   * A run directory: verdicts are cached in `judge/verdicts.jsonl` and every lookup is recorded
   * in `judge/calls.jsonl`, so re-scoring the run asks the judge nothing.
   */
  runDir?: string;
  /** A verdict store of your own (overrides the run directory's cache). Default: in memory. */
  cache?: VerdictStore;
  /** A call log of your own (overrides the run directory's). */
  callLog?: JudgeCallLog;
  /** Default `ignore`, as the reference implementation. */
  dependence?: DependenceMode;
  /** Default `majority`, as the reference implementation. */
  gate?: GateRule;
  /** Do not judge turns after one whose gate failed: the reference would never have replayed them. Default true. */
  stopAtFailedGate?: boolean;
  /** Items decided by code instead of the judge. */
  programmatic?: ProgrammaticItems;
  /** Tool-error codes that mark a call as invalid (see `INVALID_CALL_CODES`). */
  invalidCallCodes?: readonly string[];
  /** How messages are rendered in the prompt (e.g. `maxFieldChars`). Part of the cache key through the prompt. */
  render?: RenderOptions;
  /** Replace the judge prompt. */
  buildPrompt?: (input: JudgePromptInput) => string;
}

/** One checklist item over one turn. */
export interface ItemResult {
  id: string;
  weight: number;
  required: boolean;
  /** Whether the item passed when asked at each step of the turn. */
  steps: boolean[];
  /** The step at which the item first counted, or `null` if it does not count. */
  countedAt: number | null;
}

export interface ChecklistTurnResult {
  items: ItemResult[];
  score: number;
  gatePassed: boolean;
}

/** The judgement of one user turn across every checklist. */
export type TurnJudgement =
  | {
      status: "judged";
      turn: number;
      checklists: ChecklistTurnResult[];
      /** Σ over checklists of the turn's score. */
      score: number;
      /** The gates combined by the `gate` rule. */
      gatePassed: boolean;
    }
  | { status: "masked"; turn: number; reason: string };

/** How a score was reached, for logs and tests. */
export interface JudgeStats {
  /** Lookups answered by an HTTP call to the judge (each may have made several attempts). */
  judgeCalls: number;
  cacheHits: number;
  /** Lookups decided by a programmatic predicate. */
  programmatic: number;
  /** Tool items that failed without a lookup because the step's call was invalid. */
  invalidCalls: number;
}

export interface ChecklistScore {
  verdict: RewardVerdict;
  turns: TurnJudgement[];
  checklists: number;
  referenceTurns: number;
  stats: JudgeStats;
}

export type ReplayReason = "passed" | "required_item_failed" | "no_more_reference_turns" | "turn_incomplete" | "judge_failed";

/** The answer to "may the next reference user turn be replayed?" */
export interface ReplayDecision {
  replay: boolean;
  reason: ReplayReason;
  /** The user message to replay, when `replay` is true. */
  next?: UserMessage;
  /** The judgement of the turn just completed, when it was judged. */
  judgement?: TurnJudgement;
}

export interface ScoreOptions {
  signal?: AbortSignal;
  /** Recorded in the call log; a trajectory's own id is used when scoring a trajectory. */
  trajectoryId?: string;
}

const TOOL_FOCUS = new Set(["assistant.tool_calls", "tool.content"]);

/**
 * The CM2 checklist judge. For every completed user turn, every assistant step of it, every
 * checklist and every item, it asks an OpenAI-compatible judge (or a programmatic predicate)
 * whether the item holds; it aggregates as the reference does, and masks the rollout (never
 * scores it 0) when the judge cannot give an answer after its retries.
 */
export class ChecklistJudge {
  private readonly options: ChecklistJudgeOptions;
  private readonly sampling: JudgeSampling;
  private readonly retry: RetryOptions;
  private readonly limiter: ConcurrencyLimit;
  private readonly cache: VerdictStore;
  private readonly callLog: JudgeCallLog | undefined;
  private readonly inFlight = new Map<string, Promise<JudgeCallResult>>();
  private readonly lifetime = new AbortController();

  constructor(options: ChecklistJudgeOptions) {
    this.options = options;
    this.sampling = options.sampling ?? { temperature: 0 };
    this.retry = { ...defaultJudgeRetry, ...options.retry };
    this.limiter = new ConcurrencyLimit(options.concurrency ?? 16);
    this.cache = options.cache ?? (options.runDir === undefined ? new VerdictCache() : VerdictCache.inRunDir(options.runDir));
    this.callLog = options.callLog ?? (options.runDir === undefined ? undefined : JudgeCallLog.inRunDir(options.runDir));
  }

  /** The judge as a `RewardFunction`, for the trainer and for composition. */
  readonly reward: RewardFunction = async (trajectory, task, context) =>
    (await this.score(trajectory, task, { ...(context?.signal ? { signal: context.signal } : {}) })).verdict;

  /** Score a finished rollout (a trajectory or a plain message list) against the task's checklists. */
  async score(source: DialogueSource, task: Task, options: ScoreOptions = {}): Promise<ChecklistScore> {
    const checklists = checklistsOf(task);
    const referenceTurns = checklists[0]!.length;
    const dialogue = this.dialogue(source);
    const stats = emptyStats();
    const turns: TurnJudgement[] = [];
    const run = { task, trajectoryId: options.trajectoryId ?? trajectoryIdOf(source), signal: options.signal, stats };
    const judgeable = Math.min(referenceTurns, dialogue.turns.length);
    for (let turn = 0; turn < judgeable && dialogue.turns[turn]!.complete; turn++) {
      const judgement = await this.judgeDialogueTurn(dialogue, turn, run);
      turns.push(judgement);
      if (judgement.status === "masked") {
        return { verdict: masked(judgement.reason), turns, checklists: checklists.length, referenceTurns, stats };
      }
      if (!judgement.gatePassed && (this.options.stopAtFailedGate ?? true)) break;
    }
    const turnScores = turns.map((t) => (t.status === "judged" ? t.score : 0));
    const components = Object.fromEntries(turnScores.map((score, t) => [`turn/${t}`, score]));
    return {
      verdict: scored(episodeScore(turnScores, checklists.length, referenceTurns), components),
      turns,
      checklists: checklists.length,
      referenceTurns,
      stats,
    };
  }

  /** Judge one completed user turn of `source` (by default the last one). */
  async judgeTurn(source: DialogueSource, task: Task, turn?: number, options: ScoreOptions = {}): Promise<TurnJudgement> {
    checklistsOf(task);
    const dialogue = this.dialogue(source);
    const index = turn ?? dialogue.turns.length - 1;
    const target = dialogue.turns[index];
    if (!target) throw new RangeError(`turn ${index} is not in the dialogue (${dialogue.turns.length} user turns)`);
    if (!target.complete) throw new DialogueError(`turn ${index} is not complete: the assistant has not replied to the user yet`);
    const run = { task, trajectoryId: options.trajectoryId ?? trajectoryIdOf(source), signal: options.signal, stats: emptyStats() };
    return this.judgeDialogueTurn(dialogue, index, run);
  }

  /**
   * The gate for the rollout engine: judge the user turn just completed and say whether the next
   * reference user turn may be replayed, and which message that is. The verdicts are cached, so
   * scoring the finished rollout later asks the judge nothing again for this turn.
   */
  async mayReplayNextTurn(source: DialogueSource, task: Task, options: ScoreOptions = {}): Promise<ReplayDecision> {
    const checklists = checklistsOf(task);
    const dialogue = this.dialogue(source);
    const index = dialogue.turns.length - 1;
    const turn = dialogue.turns[index];
    if (!turn) throw new DialogueError("the dialogue has no user turn");
    if (!turn.complete) return { replay: false, reason: "turn_incomplete" };
    if (index >= checklists[0]!.length) return { replay: false, reason: "no_more_reference_turns" };
    const run = { task, trajectoryId: options.trajectoryId ?? trajectoryIdOf(source), signal: options.signal, stats: emptyStats() };
    const judgement = await this.judgeDialogueTurn(dialogue, index, run);
    if (judgement.status === "masked") return { replay: false, reason: "judge_failed", judgement };
    if (!judgement.gatePassed) return { replay: false, reason: "required_item_failed", judgement };
    const next = index + 1 < checklists[0]!.length ? referenceUserMessages(task)[index + 1] : undefined;
    if (!next) return { replay: false, reason: "no_more_reference_turns", judgement };
    return { replay: true, reason: "passed", next, judgement };
  }

  /** Cancel every judge call in flight and wait for the call log to be written. */
  async close(): Promise<void> {
    this.lifetime.abort(new Error("the checklist judge was closed"));
    await Promise.allSettled([...this.inFlight.values()]);
    await this.callLog?.flush();
  }

  private dialogue(source: DialogueSource): Dialogue {
    return toDialogue(source, this.options.invalidCallCodes ? { invalidCallCodes: this.options.invalidCallCodes } : {});
  }

  private async judgeDialogueTurn(dialogue: Dialogue, turn: number, run: Run): Promise<TurnJudgement> {
    const steps = dialogue.turns[turn]!.steps;
    const checklists = checklistsOf(run.task);
    const lookups = checklists.map((checklist, c) =>
      steps.map((_, s) => (checklist[turn] ?? []).map((item) => this.lookup(dialogue, { checklist: c, turn, step: s, item }, run))),
    );
    const settled = await Promise.allSettled(lookups.flat(2));
    if (run.signal?.aborted === true) throw abortReason(run.signal);
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failure) throw failure.reason;
    const answers = settled.map((r) => (r as PromiseFulfilledResult<Answer>).value);
    const failed = answers.find((a): a is Extract<Answer, { ok: false }> => !a.ok);
    if (failed) return { status: "masked", turn, reason: failed.reason };

    let cursor = 0;
    const results = checklists.map((checklist): ChecklistTurnResult => {
      const items = checklist[turn] ?? [];
      const grid = steps.map(() => items.map(() => (answers[cursor++] as Extract<Answer, { ok: true }>).passed));
      const aggregate = aggregateTurnItems(items, grid, this.options.dependence ?? "ignore");
      return {
        items: items.map((item, i) => ({
          id: item.id,
          weight: item.weight,
          required: item.required_for_next_turn,
          steps: grid.map((row) => row[i]!),
          countedAt: aggregate.countedAt[i]!,
        })),
        score: aggregate.score,
        gatePassed: aggregate.gatePassed,
      };
    });
    return {
      status: "judged",
      turn,
      checklists: results,
      score: results.reduce((sum, r) => sum + r.score, 0),
      gatePassed: combineGates(
        results.map((r) => r.gatePassed),
        this.options.gate ?? "majority",
      ),
    };
  }

  private async lookup(dialogue: Dialogue, where: Where, run: Run): Promise<Answer> {
    const turn = dialogue.turns[where.turn]!;
    const step = turn.steps[where.step]!;
    if (step.invalidCall && TOOL_FOCUS.has(where.item.focus_on)) {
      run.stats.invalidCalls++;
      return { ok: true, passed: false };
    }
    const predicate = predicateFor(this.options.programmatic, where.item, where);
    if (predicate) {
      run.stats.programmatic++;
      const assistant = splitAssistant(step.assistant);
      const view: ChecklistStepView = {
        ...where,
        dialogue,
        assistant,
        toolCalls: assistant.toolCalls.map(decodeToolCall),
        toolResults: step.tools,
        messages: turnMessages(turn, where.step),
      };
      return { ok: true, passed: await predicate(view) };
    }
    const prompt = (this.options.buildPrompt ?? buildJudgePrompt)({
      item: where.item,
      dialogue,
      turn: where.turn,
      step: where.step,
      ...(this.options.render ? { render: this.options.render } : {}),
    });
    const request = { model: this.options.model, prompt, sampling: this.sampling };
    const key = judgeRequestKey(request);
    const base = {
      key,
      model: request.model,
      task: run.task.id,
      ...(run.trajectoryId === undefined ? {} : { trajectory: run.trajectoryId }),
      checklist: where.checklist,
      turn: where.turn,
      step: where.step,
      item: where.item.id,
    };
    const started = performance.now();
    const cached = await this.cache.get(key);
    if (cached) {
      run.stats.cacheHits++;
      await this.record({ ...base, source: "cache", attempts: 0, latencyMs: performance.now() - started, verdict: cached, error: null });
      return { ok: true, passed: cached.answer };
    }
    run.stats.judgeCalls++;
    const result = await abortable(this.call(key, request), run.signal);
    await this.record({
      ...base,
      source: "judge",
      attempts: result.attempts,
      latencyMs: result.latencyMs,
      verdict: result.ok ? result.verdict : null,
      error: result.ok ? null : result.error,
    });
    if (result.ok) return { ok: true, passed: result.verdict.answer };
    return {
      ok: false,
      reason: `judge failed on item "${where.item.id}" (checklist ${where.checklist}, turn ${where.turn}, step ${where.step}): ${result.error}`,
    };
  }

  /** One HTTP lookup per key at a time: identical requests in flight share it. */
  private call(key: string, request: { model: string; prompt: string; sampling: JudgeSampling }): Promise<JudgeCallResult> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.limiter
        .run(() =>
          callJudge(this.options.client, request, {
            retry: this.retry,
            timeoutMs: this.options.timeoutMs ?? 120_000,
            signal: this.lifetime.signal,
          }),
        )
        .then(async (result) => {
          if (result.ok) await this.cache.set(key, result.verdict);
          return result;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async record(record: Omit<JudgeCallRecord, "time">): Promise<void> {
    await this.callLog?.append({ time: new Date().toISOString(), ...record });
  }
}

interface Where {
  checklist: number;
  turn: number;
  step: number;
  item: ChecklistItem;
}

interface Run {
  task: Task;
  trajectoryId: string | undefined;
  signal: AbortSignal | undefined;
  stats: JudgeStats;
}

type Answer = { ok: true; passed: boolean } | { ok: false; reason: string };

function emptyStats(): JudgeStats {
  return { judgeCalls: 0, cacheHits: 0, programmatic: 0, invalidCalls: 0 };
}

function checklistsOf(task: Task) {
  const checklists = task.checklists;
  if (!checklists || checklists.length === 0) throw new ChecklistError(`task "${task.id}" has no checklists to judge`);
  if (checklists[0]!.length === 0) throw new ChecklistError(`task "${task.id}": its first checklist has no turns`);
  return checklists;
}

function trajectoryIdOf(source: DialogueSource): string | undefined {
  return Array.isArray(source) ? undefined : (source as { id?: string }).id;
}

/** The user messages of the task's reference dialogue, one per reference turn. */
export function referenceUserMessages(task: Task): UserMessage[] {
  return (task.reference ?? task.messages).filter((m): m is UserMessage => m.role === "user");
}

/** Wait for `promise`, or reject as soon as `signal` aborts (the work itself goes on and is cached). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
