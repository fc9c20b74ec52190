import { SamplingParams, type GenerateRequest, type Generation, type Message, type Policy, type Task, type Tokenizer, type Trajectory } from "@envace/protocol";
import { ConcurrencyLimit } from "@envace/concurrency";
import {
  rehearsal,
  replayReference,
  SamplerPolicy,
  UnfoldLimits,
  unfold,
  type ActParserOptions,
  type RehearsalEnvironmentOptions,
  type UnfoldLimitsInput,
  type UserTurnSource,
} from "@envace/trajectory";
import { digestAttempt, predictedFailures, type AttemptDigest } from "./attempt.js";
import { buildMemory, earlierAttemptsNote, withNote, type NotePlacement, type RehearsalMemory } from "./memory.js";
import { buildReflectPrompt, DEFAULT_REFLECT_INSTRUCTIONS, fallbackAssessment, parseAssessment, type Assessment } from "./reflect.js";
import {
  parseRehearsalSetting,
  REHEARSAL_SAMPLING,
  RehearsalSettingError,
  type RehearsalSampling,
  type RehearsalSetting,
  type RehearsalSettingInput,
} from "./setting.js";
import { buildSummarizePrompt, DEFAULT_SUMMARIZE_INSTRUCTIONS, fallbackSummary, parseSummary, type AssessedAttempt, type Summary } from "./summarize.js";
import { countMessages, tokenCounter, type TokenCounter } from "./tokens.js";
import { MeteredPolicy, type Usage } from "./usage.js";

export interface RehearseOptions {
  task: Task;
  /** The policy: it acts, rehearses every tool result, reflects on each attempt and summarises them all. */
  policy: Policy;
  /** `parallel:N` or `sequential:N` (or the object form). */
  setting: RehearsalSettingInput;
  /**
   * Private by construction: rehearsal takes no `Environment`. This member exists only so that
   * passing one is a type error; every tool result of a rehearsal comes from `policy`.
   */
  environment?: never;
  /** Likewise for the user's own side in dual-control tasks: the policy imagines the user's device too. */
  userEnvironment?: never;
  /** Per-role sampling over `REHEARSAL_SAMPLING` (Act and Rehearse at 1.0, reflect and summarize at 0.01). */
  sampling?: Partial<RehearsalSampling>;
  /** Limits of each attempt. `maxPromptTokens` also bounds reflect and summarize prompts: a longer one is not sent. */
  limits?: UnfoldLimitsInput;
  /** Token budget of the rehearsal memory, and of what each sequential attempt is shown. Default none. */
  memoryBudget?: number | null;
  /** The policy's tokenizer, to count budget tokens exactly; without it they are estimated (`estimateTokens`). */
  tokenizer?: Tokenizer;
  /** Tools that change the world. Default: every tool counts as one. */
  writeTools?: readonly string[];
  /** Where sequential attempts are shown the earlier ones. Default `system`. */
  placement?: NotePlacement;
  /** Parallel attempts run at once. Default: all. */
  concurrency?: number;
  /** User turns inside attempts (a factory when the source holds state). Default: replay the task's reference. */
  users?: UserTurnSource | ((attempt: number) => UserTurnSource);
  /** Act parser settings, as for `unfold`. */
  parser?: Omit<ActParserOptions, "tools" | "callId">;
  /** Rehearse-role prompt, examples and parser, as for `rehearsal()`. */
  rehearse?: Omit<RehearsalEnvironmentOptions, "policy">;
  /** Replace the reflect or summarize instructions (system messages). */
  instructions?: { reflect?: string; summarize?: string };
  signal?: AbortSignal;
}

/** One private attempt: its self-unfolded trajectory, its digest, and its assessment. */
export interface RehearsalAttempt {
  index: number;
  trajectory: Trajectory;
  digest: AttemptDigest;
  assessment: Assessment;
  /** The reflect generation; absent when its prompt was too long to send. */
  reflection?: Generation;
}

/** Everything a rehearsal produced. `memory` is what the committed execution receives. */
export interface RehearsalRun {
  setting: RehearsalSetting;
  attempts: RehearsalAttempt[];
  summary: Summary;
  /** The summarize generation; absent when its prompt was too long to send. */
  summarization?: Generation;
  memory: RehearsalMemory;
  /** Tokens per role (act, rehearse, reflect, summarize) of every generation of the rehearsal. */
  usage: Usage;
  /** Outputs that could not be read (replaced by a deterministic fallback). */
  malformed: { reflect: number; summarize: number };
  /** Prompts over `limits.maxPromptTokens`, not sent (replaced by a deterministic fallback). */
  skipped: { reflect: number; summarize: number };
}

/**
 * Rehearse a task privately: N attempts in which the policy acts and predicts every tool result
 * itself (self-unfolded rollouts, `unfold` with a `RehearsalEnvironment`), a reflection on each
 * attempt, and one summary of them all, condensed into a rehearsal memory within the token budget.
 *
 * Parallel attempts are independent and run concurrently; in sequential mode attempt k is shown
 * attempts 0…k-1 with their assessments (within the budget) in its starting context. Reflect and
 * summarize outputs are read leniently; unreadable ones are replaced by deterministic fallbacks
 * built from the attempts and counted in `malformed`. Nothing here can reach a real environment.
 */
export async function rehearse(options: RehearseOptions): Promise<RehearsalRun> {
  const setting = parseRehearsalSetting(options.setting);
  if (setting.mode === "none") throw new RehearsalSettingError('rehearse: the setting is "none"; there is nothing to rehearse');
  const { task, signal } = options;
  const judge = rehearsalJudge(options);
  const { policy, sampling } = judge;

  const attempt = async (index: number, context: Task, attemptSignal: AbortSignal | undefined): Promise<RehearsalAttempt> => {
    const users = typeof options.users === "function" ? options.users(index) : (options.users ?? replayReference());
    const trajectory = await unfold({
      task: context,
      actor: policy,
      environment: rehearsal(policy, options.rehearse ?? {}),
      // Dual control: a simulated user's own tool calls (its phone) are imagined by the policy too.
      userEnvironment: rehearsal(policy, options.rehearse ?? {}),
      users,
      limits: options.limits ?? {},
      preset: "training",
      sampling: { act: seeded(sampling.act, index), rehearse: seeded(sampling.rehearse, index) },
      ...(options.parser === undefined ? {} : { parser: options.parser }),
      rollout: index,
      id: `${task.id}/rehearsal/${index}`,
      ...(attemptSignal === undefined ? {} : { signal: attemptSignal }),
    });
    return judge.reflect(trajectory, index);
  };

  const attempts: RehearsalAttempt[] = [];
  if (setting.mode === "sequential") {
    for (let index = 0; index < setting.attempts; index += 1) {
      const note = earlierAttemptsNote(attempts.map(assessed), options.memoryBudget, judge.counter);
      attempts.push(await attempt(index, withNote(task, note, options.placement), signal));
    }
  } else {
    attempts.push(...(await runAll(setting.attempts, options.concurrency ?? setting.attempts, signal, (i, s) => attempt(i, task, s))));
  }
  return { setting, ...(await judge.conclude(attempts)) };
}

/** What `rememberAttempts` needs: the rehearsal's options less those of unfolding attempts. */
export type RememberOptions = Pick<
  RehearseOptions,
  "task" | "policy" | "sampling" | "limits" | "memoryBudget" | "tokenizer" | "writeTools" | "instructions" | "signal"
> & {
  /** Self-unfolded rollouts of `task`, unfolded elsewhere (e.g. the first rollouts of a training group). */
  trajectories: readonly Trajectory[];
};

/**
 * The memory of attempts unfolded elsewhere: each is reflected on and all are summarised, exactly
 * as `rehearse` does with its own attempts. A trainer uses it to start some rollouts of a group
 * from the memory of the others, so that the policy learns to act on its own rehearsal memory.
 * `usage` counts the reflect and summarize generations only.
 */
export async function rememberAttempts(options: RememberOptions): Promise<Omit<RehearsalRun, "setting">> {
  const judge = rehearsalJudge(options);
  const attempts = await Promise.all(options.trajectories.map((trajectory, index) => judge.reflect(trajectory, index)));
  return judge.conclude(attempts);
}

/**
 * The reflect and summarize half of a rehearsal, shared by `rehearse` and `rememberAttempts`: it
 * meters the policy, reflects on one attempt at a time and concludes a memory from them all.
 */
function rehearsalJudge(options: RememberOptions | RehearseOptions) {
  const { task, signal } = options;
  const counter = tokenCounter(options.tokenizer);
  const policy = MeteredPolicy.wrap(options.policy, counter);
  const limits = UnfoldLimits.parse(options.limits ?? {});
  const sampling = resolveSampling(options.sampling, limits.maxResponseTokens);
  const isWrite = options.writeTools === undefined ? () => true : (tool: string) => options.writeTools!.includes(tool);
  const promptSize = promptSizer(options.policy, counter);
  const malformed = { reflect: 0, summarize: 0 };
  const skipped = { reflect: 0, summarize: 0 };

  const generateStructured = async (
    role: "reflect" | "summarize",
    messages: Message[],
    seedOffset: number,
  ): Promise<{ generation?: Generation; problem?: string }> => {
    const size = promptSize(messages);
    if (size > limits.maxPromptTokens) {
      skipped[role] += 1;
      return { problem: `the ${role} prompt has ${size} tokens, over maxPromptTokens ${limits.maxPromptTokens}` };
    }
    const request: GenerateRequest = { role, messages, tools: [], sampling: seeded(sampling[role], seedOffset) };
    return { generation: await policy.generate(request, signal) };
  };

  const reflect = async (trajectory: Trajectory, index: number): Promise<RehearsalAttempt> => {
    const digest = digestAttempt(trajectory, index);
    const messages = buildReflectPrompt(task, digest, options.instructions?.reflect ?? DEFAULT_REFLECT_INSTRUCTIONS);
    const out = await generateStructured("reflect", messages, digest.index);
    if (out.generation === undefined) return { index, trajectory, digest, assessment: fallbackAssessment(digest, out.problem ?? "not generated") };
    const parsed = parseAssessment(out.generation.text);
    if (!parsed.ok) malformed.reflect += 1;
    const assessment = parsed.ok ? parsed.assessment : fallbackAssessment(digest, parsed.problem);
    return { index, trajectory, digest, assessment, reflection: out.generation };
  };

  const conclude = async (attempts: RehearsalAttempt[]): Promise<Omit<RehearsalRun, "setting">> => {
    const assessedAttempts = attempts.map(assessed);
    const summaryOut = await generateStructured(
      "summarize",
      buildSummarizePrompt(task, assessedAttempts, options.instructions?.summarize ?? DEFAULT_SUMMARIZE_INSTRUCTIONS),
      0,
    );
    let summary: Summary;
    if (summaryOut.generation === undefined) {
      summary = fallbackSummary(assessedAttempts, summaryOut.problem ?? "not generated");
    } else {
      const parsed = parseSummary(summaryOut.generation.text);
      if (parsed.ok) summary = parsed.summary;
      else {
        malformed.summarize += 1;
        summary = fallbackSummary(assessedAttempts, parsed.problem);
      }
    }
    const memory = buildMemory({
      summary,
      predictedFailures: predictedFailures(
        attempts.map((a) => a.digest),
        isWrite,
      ),
      attempts: attempts.length,
      budget: options.memoryBudget,
      counter,
    });
    return {
      attempts,
      summary,
      memory,
      usage: policy.usage,
      malformed,
      skipped,
      ...(summaryOut.generation === undefined ? {} : { summarization: summaryOut.generation }),
    };
  };

  return { policy, counter, sampling, reflect, conclude };
}

function assessed(attempt: RehearsalAttempt): AssessedAttempt {
  return { digest: attempt.digest, assessment: attempt.assessment };
}

function resolveSampling(overrides: Partial<RehearsalSampling> | undefined, maxResponseTokens: number): Record<keyof RehearsalSampling, SamplingParams> {
  const resolve = (role: keyof RehearsalSampling): SamplingParams => {
    const params = SamplingParams.parse({ ...REHEARSAL_SAMPLING[role], ...overrides?.[role] });
    return { ...params, maxTokens: Math.min(params.maxTokens, maxResponseTokens) };
  };
  return { act: resolve("act"), rehearse: resolve("rehearse"), reflect: resolve("reflect"), summarize: resolve("summarize") };
}

/** Attempts sample independently: a fixed seed is offset by the attempt index. */
function seeded(params: SamplingParams, offset: number): SamplingParams {
  return params.seed === undefined ? params : { ...params, seed: params.seed + offset };
}

/** The size of a prompt: exact for a template-rendering policy, else counted on the flattened text. */
function promptSizer(policy: Policy, counter: TokenCounter): (messages: Message[]) => number {
  if (policy instanceof SamplerPolicy) return (messages) => policy.renderer.prompt(messages).length;
  return (messages) => countMessages(counter, messages);
}

/** Run `count` jobs with at most `limit` at once; the first failure cancels the rest and rejects. */
async function runAll<T>(count: number, limit: number, signal: AbortSignal | undefined, job: (index: number, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  const controller = new AbortController();
  const cancel = (): void => {
    controller.abort(signal?.reason);
  };
  signal?.addEventListener("abort", cancel, { once: true });
  if (signal?.aborted === true) cancel();
  const gate = new ConcurrencyLimit(Math.max(1, Math.min(limit, count)));
  try {
    return await Promise.all(
      Array.from({ length: count }, (_, index) =>
        gate
          .run(() => job(index, controller.signal), controller.signal)
          .catch((error: unknown) => {
            if (!controller.signal.aborted) controller.abort(error);
            throw error;
          }),
      ),
    );
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}
