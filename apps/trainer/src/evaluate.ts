/**
 * Evaluation of a policy against the real environment, with or without test-time private
 * rehearsal. The trainer's periodic evaluation and `envace eval` both call `evaluate`:
 *
 * ```ts
 * const result = await evaluate({
 *   policy,                                          // a Policy (e.g. from policyFromSpec)
 *   tasks,                                           // held-out Tasks
 *   environment: () => new BuiltinEnvironment(),     // one fresh real environment per task
 *   reward: outcomeReward,                           // any @envace/rewards RewardFunction
 *   rehearsal: "parallel:2",                         // "none" (default), "parallel:N", "sequential:N"
 *   memoryBudget: 128,                               // optional token budget of the rehearsal memory
 *   rehearsePrompt: domain.rehearsePrompt,           // the Rehearse prompt the policy was trained with
 *   concurrency: 8,                                  // tasks at once (default 4)
 *   onProgress: ({ done, total }) => bar.tick(),
 * });
 * result.successRate; result.meanReward; result.tokensPerTask; result.fidelity.tools.buy?.exactRate; result.entries;
 * ```
 *
 * Per task: rehearse privately (unless `none`), commit one execution against a fresh real
 * environment conditioned on the rehearsal memory, score it with `reward` (given the final
 * environment state), then probe rehearsal fidelity (each grounded call rehearsed again from its
 * history, compared with the real result; `fidelity: false` skips it). A task whose episode throws
 * becomes an entry with `error` and counts as a failure; an abort rejects.
 *
 * Tokens per task are prompt + output tokens of every generation of the method (act, rehearse,
 * reflect, summarize; rehearsal and committed execution), without the fidelity probes, which are
 * reported apart. They are exact when the policy returns token ids, else estimated (`@envace/rehearsal`
 * `estimateTokens`, or the tokenizer when given) and flagged.
 */
import { z } from "zod";
import type { Environment, Policy, RewardVerdict, SamplingParamsInput, Task, Tokenizer, Trajectory } from "@envace/protocol";
import {
  aggregateFidelity,
  fidelityRecord,
  addUsage,
  FidelityRecord,
  probeFidelity,
  RehearsalSettingText,
  rehearseThenCommit,
  totalTokens,
  type Episode,
  type FidelityComparison,
  type FidelityReport,
  type RehearsalSampling,
  type RehearsalSettingInput,
  type Usage,
} from "@envace/rehearsal";
import type { RewardFunction } from "@envace/rewards";
import { ConcurrencyLimit } from "@envace/concurrency";
import { deriveSeed, seedOfText, type RehearsePromptOptions, type UnfoldLimitsInput, type UserTurnSource } from "@envace/trajectory";
import { CountingEnvironment } from "./counting-environment.js";

export interface EvaluateOptions {
  policy: Policy;
  tasks: readonly Task[];
  /** A fresh real environment for one task (environments hold episode state). */
  environment: (task: Task) => Environment;
  reward: RewardFunction;
  /** `none` (default), `parallel:N` or `sequential:N`. */
  rehearsal?: RehearsalSettingInput;
  /** Token budget of the rehearsal memory. Default: none. */
  memoryBudget?: number | null;
  /** Safe-write gating of the committed execution. Default off. */
  safeWrites?: boolean;
  /** Tools that change the world (for the memory's priorities and the gate). Default: all. */
  writeTools?: readonly string[];
  /** The policy's tokenizer: exact budget counts (and token counts for policies that return no ids). */
  tokenizer?: Tokenizer;
  /** Tasks evaluated at once. Default 4. */
  concurrency?: number;
  /** Probe rehearsal fidelity. Default true. */
  fidelity?: boolean;
  /**
   * Seeds every generation: a task's requests derive their seeds from this seed and the task id,
   * so a run samples the same tokens however many tasks run at once, and a resumed run as an
   * uninterrupted one. Default: the samplers' own randomness.
   */
  seed?: number;
  /** Committed sampling over the `evaluation` preset (Act at 0.6, top-p 0.95). */
  sampling?: { act?: SamplingParamsInput; user?: SamplingParamsInput };
  /** Sampling during rehearsal over `REHEARSAL_SAMPLING`. */
  rehearsalSampling?: Partial<RehearsalSampling>;
  /** How the Rehearse role is prompted (attempts and fidelity probes): use the training setting. */
  rehearsePrompt?: RehearsePromptOptions;
  /** Reflect and summarize instructions, over the defaults: use what the policy was trained with. */
  judgeInstructions?: { reflect?: string; summarize?: string };
  /** Limits of every rollout (attempts and committed); `maxPromptTokens` also bounds reflect/summarize prompts. */
  limits?: UnfoldLimitsInput;
  /** User turns of the committed execution and of attempts. Default: replay the task's reference. */
  users?: (task: Task) => UserTurnSource;
  /** Whether a verdict counts as solved. Default: scored with value ≥ 1. */
  isSuccess?: (verdict: RewardVerdict) => boolean;
  /** Called as each task finishes (in completion order). */
  onProgress?: (progress: { done: number; total: number; entry: EvaluationEntry }) => void;
  /** Called with each task's full episode (rehearsal attempts and committed trajectory), e.g. to save it. */
  onEpisode?: (task: Task, episode: Episode) => void;
  /**
   * Called once per task with everything it produced: the episode (absent when it threw), the
   * verdict, and each real answer next to the Rehearse role's prediction (the fidelity probes).
   */
  onTask?: (task: Task, detail: EvaluatedTaskDetail) => void;
  signal?: AbortSignal;
}

export interface EvaluatedTaskDetail {
  entry: EvaluationEntry;
  episode?: Episode;
  verdict: RewardVerdict | null;
  comparisons: readonly FidelityComparison[];
}

const RoleTokens = z.object({ generations: z.number(), promptTokens: z.number(), outputTokens: z.number(), estimated: z.number() });

/** One task of one evaluation setting; a line of `entries.jsonl`. */
export const EvaluationEntry = z.object({
  setting: z.string(),
  memoryBudget: z.number().nullable(),
  safeWrites: z.boolean(),
  taskId: z.string(),
  success: z.boolean(),
  reward: z.number().nullable(),
  verdict: z.unknown().nullable(),
  termination: z.string().nullable(),
  /** Why the episode could not finish (the task counts as failed). */
  error: z.string().optional(),
  tokens: z.object({
    /** The method's tokens: rehearsal + committed. */
    total: z.number(),
    rehearsal: z.number(),
    committed: z.number(),
    probes: z.number(),
    byRole: z.record(z.string(), RoleTokens),
    estimated: z.boolean(),
  }),
  environmentCalls: z.number(),
  /** Real-environment calls made while rehearsing: 0 by construction, recorded to show it. */
  rehearsalEnvironmentCalls: z.number(),
  rehearsal: z
    .object({
      attempts: z.number(),
      malformed: z.object({ reflect: z.number(), summarize: z.number() }),
      skipped: z.object({ reflect: z.number(), summarize: z.number() }),
      /** The memory the committed execution was conditioned on. */
      memory: z.string(),
      memoryTokens: z.number(),
      memoryCompressed: z.boolean(),
      predictedFailures: z.number(),
      summarySource: z.enum(["policy", "fallback"]),
    })
    .nullable(),
  gate: z.object({ events: z.number(), changed: z.number() }),
  fidelity: z.array(FidelityRecord),
  durationMs: z.number(),
});
export type EvaluationEntry = z.infer<typeof EvaluationEntry>;

/** The aggregate of one setting. Rates are over all tasks; `meanReward` over scored ones. */
export interface EvaluationSummary {
  setting: string;
  memoryBudget: number | null;
  safeWrites: boolean;
  tasks: number;
  successes: number;
  successRate: number;
  /** Mean reward of scored tasks (`null` if none); errors and masked verdicts are left out. */
  meanReward: number | null;
  masked: number;
  errors: number;
  /** Mean method tokens per task, and per role. */
  tokensPerTask: number;
  tokensPerTaskByRole: Record<string, number>;
  probeTokensPerTask: number;
  /** Some counts were estimated (the policy returned no token ids). */
  tokensEstimated: boolean;
  fidelity: FidelityReport;
  malformed: { reflect: number; summarize: number };
  skipped: { reflect: number; summarize: number };
  /** Mean rehearsal-memory tokens per rehearsed task. */
  memoryTokensPerTask: number | null;
  gate: { events: number; changed: number };
  rehearsalEnvironmentCalls: number;
}

export interface EvaluationResult extends EvaluationSummary {
  /** In task order. */
  entries: EvaluationEntry[];
}

const defaultSuccess = (verdict: RewardVerdict): boolean => verdict.status === "scored" && verdict.value >= 1 - 1e-9;

export async function evaluate(options: EvaluateOptions): Promise<EvaluationResult> {
  const setting = RehearsalSettingText.parse(options.rehearsal ?? "none");
  const memoryBudget = setting === "none" ? null : (options.memoryBudget ?? null);
  const safeWrites = options.safeWrites ?? false;
  const limit = new ConcurrencyLimit(options.concurrency ?? 4);
  const isSuccess = options.isSuccess ?? defaultSuccess;
  const entries: EvaluationEntry[] = new Array<EvaluationEntry>(options.tasks.length);
  let done = 0;

  const told = (task: Task, entry: EvaluationEntry, detail: Omit<EvaluatedTaskDetail, "entry">): EvaluationEntry => {
    options.onTask?.(task, { entry, ...detail });
    return entry;
  };

  const one = async (task: Task, environment: CountingEnvironment): Promise<EvaluationEntry> => {
    const started = Date.now();
    const { sampling, rehearsalSampling } = seededSampling(options, task.id);
    const base = { setting, memoryBudget, safeWrites, taskId: task.id };
    let episode: Episode;
    try {
      episode = await rehearseThenCommit({
        task,
        policy: options.policy,
        environment,
        setting,
        safeWrites,
        onRehearsed: () => {
          environment.markCommitStart();
        },
        rehearsal: {
          memoryBudget,
          ...(options.writeTools === undefined ? {} : { writeTools: options.writeTools }),
          ...(rehearsalSampling === undefined ? {} : { sampling: rehearsalSampling }),
          ...(options.rehearsePrompt === undefined ? {} : { rehearse: { prompt: options.rehearsePrompt } }),
          ...(options.judgeInstructions === undefined ? {} : { instructions: options.judgeInstructions }),
          ...(options.users === undefined ? {} : { users: () => options.users!(task) }),
        },
        ...(sampling === undefined ? {} : { sampling }),
        ...(options.limits === undefined ? {} : { limits: options.limits }),
        ...(options.users === undefined ? {} : { users: options.users(task) }),
        ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      return told(task, failedEntry(base, error, environment, started), { verdict: null, comparisons: [] });
    }
    options.onEpisode?.(task, episode);
    const trajectory = episode.committed.trajectory;
    let verdict: RewardVerdict;
    try {
      verdict = await options.reward(trajectory, task, {
        state: await environment.state(),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      return told(task, failedEntry(base, error, environment, started), { episode, verdict: null, comparisons: [] });
    }
    const probed =
      options.fidelity === false
        ? { comparisons: [], usage: {} }
        : await probeFidelity({
            trajectory,
            task: episode.committed.task,
            policy: options.policy,
            ...(rehearsalSampling?.rehearse === undefined ? {} : { sampling: rehearsalSampling.rehearse }),
            ...(options.rehearsePrompt === undefined ? {} : { rehearse: { prompt: options.rehearsePrompt } }),
            ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
            ...(options.signal === undefined ? {} : { signal: options.signal }),
          });
    const run = episode.rehearsal;
    const rehearsalUsage = run?.usage ?? {};
    const method = addUsage(rehearsalUsage, episode.committed.usage);
    return told(
      task,
      {
        ...base,
        success: isSuccess(verdict),
        reward: verdict.status === "scored" ? verdict.value : null,
        verdict,
        termination: terminationName(trajectory),
        tokens: {
          total: totalTokens(method),
          rehearsal: totalTokens(rehearsalUsage),
          committed: totalTokens(episode.committed.usage),
          probes: totalTokens(probed.usage),
          byRole: method,
          estimated: [method, probed.usage].some((u: Usage) => Object.values(u).some((r) => r.estimated > 0)),
        },
        environmentCalls: environment.calls,
        rehearsalEnvironmentCalls: environment.callsBeforeCommit,
        rehearsal:
          run === undefined
            ? null
            : {
                attempts: run.attempts.length,
                malformed: run.malformed,
                skipped: run.skipped,
                memory: run.memory.text,
                memoryTokens: run.memory.tokens,
                memoryCompressed: run.memory.compressed,
                predictedFailures: run.memory.predictedFailures.length,
                summarySource: run.summary.source,
              },
        gate: { events: episode.committed.gate.length, changed: episode.committed.gate.filter((e) => e.changed).length },
        fidelity: probed.comparisons.map(fidelityRecord),
        durationMs: Date.now() - started,
      },
      { episode, verdict, comparisons: probed.comparisons },
    );
  };

  await Promise.all(
    options.tasks.map((task, index) =>
      limit.run(async () => {
        const environment = new CountingEnvironment(options.environment(task));
        let entry: EvaluationEntry;
        // Released on every path (the committed rollout closes it too; closing is idempotent).
        try {
          entry = await one(task, environment);
        } finally {
          await environment.close();
        }
        entries[index] = entry;
        done += 1;
        options.onProgress?.({ done, total: options.tasks.length, entry });
      }, options.signal),
    ),
  );
  return { ...summarizeEntries(entries, { setting, memoryBudget, safeWrites }), entries };
}

/** The sampling of task `taskId`: as given, with a seed for every role derived from `options.seed` and the id. */
function seededSampling(
  options: Pick<EvaluateOptions, "seed" | "sampling" | "rehearsalSampling">,
  taskId: string,
): { sampling: EvaluateOptions["sampling"]; rehearsalSampling: EvaluateOptions["rehearsalSampling"] } {
  const { seed } = options;
  if (seed === undefined) return { sampling: options.sampling, rehearsalSampling: options.rehearsalSampling };
  const withSeed = (params: SamplingParamsInput | undefined, role: number): SamplingParamsInput => ({
    ...params,
    seed: deriveSeed(seed, seedOfText(taskId), role),
  });
  const rehearsal = options.rehearsalSampling;
  return {
    sampling: { act: withSeed(options.sampling?.act, 0), user: withSeed(options.sampling?.user, 1) },
    rehearsalSampling: {
      act: withSeed(rehearsal?.act, 2),
      rehearse: withSeed(rehearsal?.rehearse, 3),
      reflect: withSeed(rehearsal?.reflect, 4),
      summarize: withSeed(rehearsal?.summarize, 5),
    },
  };
}

/** The summary of a setting's entries (also for entries read back from `entries.jsonl`). */
export function summarizeEntries(
  entries: readonly EvaluationEntry[],
  setting: Pick<EvaluationSummary, "setting" | "memoryBudget" | "safeWrites">,
): EvaluationSummary {
  const n = entries.length;
  const mean = (values: readonly number[]): number | null => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
  const scored = entries.flatMap((e) => (e.reward === null ? [] : [e.reward]));
  const roles = new Set(entries.flatMap((e) => Object.keys(e.tokens.byRole)));
  const byRole = Object.create(null) as Record<string, number>;
  for (const role of [...roles].sort())
    byRole[role] = mean(entries.map((e) => (e.tokens.byRole[role]?.promptTokens ?? 0) + (e.tokens.byRole[role]?.outputTokens ?? 0))) ?? 0;
  const rehearsed = entries.flatMap((e) => (e.rehearsal === null ? [] : [e.rehearsal]));
  const sum = (pick: (e: EvaluationEntry) => number): number => entries.reduce((total, e) => total + pick(e), 0);
  return {
    ...setting,
    tasks: n,
    successes: entries.filter((e) => e.success).length,
    successRate: n === 0 ? 0 : entries.filter((e) => e.success).length / n,
    meanReward: mean(scored),
    masked: entries.filter((e) => e.error === undefined && e.reward === null).length,
    errors: entries.filter((e) => e.error !== undefined).length,
    tokensPerTask: mean(entries.map((e) => e.tokens.total)) ?? 0,
    tokensPerTaskByRole: byRole,
    probeTokensPerTask: mean(entries.map((e) => e.tokens.probes)) ?? 0,
    tokensEstimated: entries.some((e) => e.tokens.estimated),
    fidelity: aggregateFidelity(entries.flatMap((e) => e.fidelity)),
    malformed: { reflect: rehearsed.reduce((t, r) => t + r.malformed.reflect, 0), summarize: rehearsed.reduce((t, r) => t + r.malformed.summarize, 0) },
    skipped: { reflect: rehearsed.reduce((t, r) => t + r.skipped.reflect, 0), summarize: rehearsed.reduce((t, r) => t + r.skipped.summarize, 0) },
    memoryTokensPerTask: mean(rehearsed.map((r) => r.memoryTokens)),
    gate: { events: sum((e) => e.gate.events), changed: sum((e) => e.gate.changed) },
    rehearsalEnvironmentCalls: sum((e) => e.rehearsalEnvironmentCalls),
  };
}

function terminationName(trajectory: Trajectory): string {
  const t = trajectory.termination;
  return t.reason === "parse_error" || t.reason === "env_error" ? `${t.reason}:${t.code}` : t.reason;
}

function failedEntry(
  base: Pick<EvaluationEntry, "setting" | "memoryBudget" | "safeWrites" | "taskId">,
  error: unknown,
  environment: CountingEnvironment,
  started: number,
): EvaluationEntry {
  return {
    ...base,
    success: false,
    reward: null,
    verdict: null,
    termination: null,
    error: error instanceof Error ? error.message : String(error),
    tokens: { total: 0, rehearsal: 0, committed: 0, probes: 0, byRole: {}, estimated: false },
    environmentCalls: environment.calls,
    rehearsalEnvironmentCalls: environment.callsBeforeCommit,
    rehearsal: null,
    gate: { events: 0, changed: 0 },
    fidelity: [],
    durationMs: Date.now() - started,
  };
}
