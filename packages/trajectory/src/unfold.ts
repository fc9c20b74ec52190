import { AbortFlag } from "@envace/concurrency";
import {
  ContextLengthError,
  SamplingParams,
  type ActStep,
  type AssistantMessage,
  type Environment,
  type GenerateRequest,
  type Generation,
  type Message,
  type Policy,
  type Step,
  type Task,
  type Termination,
  type ToolOutcome,
  type ToolResult,
  type ToolSpec,
  type Trajectory,
} from "@envace/protocol";
import { parseActOutput, type ActParserOptions } from "./act-parser.js";
import { canContinue } from "./incremental.js";
import { toolMessage } from "./messages.js";
import { RehearsalEnvironment } from "./rehearsal-environment.js";
import { REHEARSE_TRUNCATED_DETAIL } from "./rehearse-parser.js";
import { SAMPLING_PRESETS, UnfoldLimits, type RoleSampling, type UnfoldLimitsInput } from "./settings.js";
import { seededFor } from "./seed.js";
import { openUserDevice } from "./user-device.js";
import { replayReference, type UserTurnSource } from "./user-turns.js";

// Which request of a turn a derived seed is for (see `seededFor`): Act, the user, each rehearsed call.
const ACT = 0;
const USER = 1;
const REHEARSE = 2;

export interface UnfoldOptions {
  task: Task;
  /** The policy in the Act role. */
  actor: Policy;
  /**
   * A real `Environment` (every outcome `grounded`) or a `RehearsalEnvironment` whose policy
   * predicts each result (every outcome `rehearsed`: a self-unfolded rollout). In EnvACE the
   * rehearsal policy is `actor` itself; in the caller-only baseline it is a frozen simulator.
   */
  environment: Environment | RehearsalEnvironment;
  /**
   * The user's own side in a dual-control task (τ²-Bench telecom: the customer's phone), offered
   * to a simulated user (`simulateUser`): a real `Environment`, or a `RehearsalEnvironment` whose
   * policy imagines the device's answers (its whitelist is `task.metadata.user_tools`).
   */
  userEnvironment?: Environment | RehearsalEnvironment;
  /** Where user turns after the agent's replies come from. Default: replay the task's reference. */
  users?: UserTurnSource;
  limits?: UnfoldLimitsInput;
  /**
   * Sampling preset (default `training`), then per-role overrides. A role's `seed` seeds each of
   * its requests with a seed derived from it, the rollout index, the turn and the call, so the
   * rollouts of a group differ and each samples the same tokens however many run at once.
   */
  preset?: keyof typeof SAMPLING_PRESETS;
  sampling?: Partial<RoleSampling>;
  /** Act parser settings; the tools always come from the environment. */
  parser?: Omit<ActParserOptions, "tools" | "callId">;
  /** Index of this rollout within its task's group. Default 0. */
  rollout?: number;
  /** Trajectory id. Default `<task id>/<rollout>`. */
  id?: string;
  /** Cancels the rollout: pending generations get the signal, and `unfold` rejects with its reason. */
  signal?: AbortSignal;
  /** Called with each step once it is complete, for progress displays and streaming logs. */
  onStep?: (step: Step) => void;
}

/**
 * Roll out one task as a POMDP: Act, then each tool call's outcome, then Act again, until the
 * agent stops, the user stops, a limit is reached, or an output is malformed.
 *
 * - Parallel tool calls of one Act turn are answered in order; in a rehearsal each call is
 *   predicted from the same history (the conversation before that turn plus the turn itself).
 * - When the actor can continue its own tokens (`TokenContinuation`, e.g. `SamplerPolicy`), every
 *   Act request after the first carries exact `promptTokens`, and an over-long prompt ends the
 *   rollout before sampling. Otherwise prompt length is checked on the generation returned.
 * - Malformed Act output ends the rollout with `parse_error`; unreadable or truncated Rehearse
 *   output with `env_error` (code from `RehearseParseErrorCode`) or `max_tokens`; an exception of a
 *   real environment with `env_error` code `ENVIRONMENT_EXCEPTION`. The generation that failed
 *   stays in the trajectory, so it still becomes a (penalised) training row.
 * - Errors of the policy itself (a server down) reject: they say nothing about the agent.
 * - A real environment is closed (`Environment.close`) when the rollout ends, however it ends;
 *   its `state()` stays readable for the evaluator.
 */
export async function unfold(options: UnfoldOptions): Promise<Trajectory> {
  const abort = new AbortFlag(options.signal);
  try {
    return await unfoldRollout(options, { ...options, abort });
  } finally {
    abort.dispose();
  }
}

/** The options that differ between the rollouts of a group. */
interface OwnRolloutOptions extends Pick<UnfoldOptions, "environment" | "userEnvironment" | "users" | "rollout" | "id" | "signal"> {
  /** Follows `signal`; the engine checks it at every step. */
  abort: AbortFlag;
}

/** What every rollout of a group shares. */
export type SharedRolloutOptions = Omit<UnfoldOptions, keyof OwnRolloutOptions>;

/**
 * `unfold` with shared and per-rollout options apart, so a group hands its shared options to every
 * rollout as they are (copying a large options object per rollout is a measurable cost).
 */
export async function unfoldRollout(options: SharedRolloutOptions, own: OwnRolloutOptions): Promise<Trajectory> {
  const user = own.userEnvironment;
  const realUser = user !== undefined && !(user instanceof RehearsalEnvironment) ? user : undefined;
  if (own.environment instanceof RehearsalEnvironment && realUser === undefined) return runRollout(options, own);
  // The rollout owns the real environment's episode: it releases it on every path, errors and
  // cancellation included, so no server process or connection outlives the rollout.
  try {
    return await runRollout(options, own);
  } finally {
    if (!(own.environment instanceof RehearsalEnvironment)) await own.environment.close?.();
    await realUser?.close?.();
  }
}

async function runRollout(options: SharedRolloutOptions, own: OwnRolloutOptions): Promise<Trajectory> {
  const { task, actor } = options;
  const { environment, signal, abort, id } = own;
  const rollout = own.rollout ?? 0;
  const { limits, sampling } = resolveSettings(options);
  const users = own.users ?? replayReference();
  const world =
    environment instanceof RehearsalEnvironment ? ({ kind: "rehearsed", rehearser: environment } as const) : ({ kind: "grounded", real: environment } as const);
  const continuable = canContinue(actor) ? actor : undefined;

  abort.throwIfAborted();
  await environment.reset(task);
  const tools: ToolSpec[] = [...environment.tools()];
  let turns = 0;
  const device =
    own.userEnvironment === undefined ? undefined : await openUserDevice(own.userEnvironment, task, sampling.rehearse, { rollout, turn: () => turns }, signal);
  // Call ids name the turn: `call_<turn>_<index>`.
  const parserOptions: ActParserOptions = { ...options.parser, tools, callId: (index) => `call_${turns}_${index}` };
  const context = [...task.messages];
  const messages: Message[] = [...context];
  const steps: Step[] = [];
  let toolErrors = 0;
  let previous: Generation | undefined;
  // Messages added since the previous Act generation; tracked only for token continuation.
  let appended: Message[] = [];

  const finish = (termination: Termination, masked?: string): Trajectory => ({
    id: id ?? `${task.id}/${rollout}`,
    taskId: task.id,
    rollout,
    context,
    steps,
    termination,
    ...(masked === undefined ? {} : { reward: { status: "masked" as const, reason: masked } }),
    metadata:
      world.kind === "rehearsed"
        ? { actor: actor.id, environment: world.kind, rehearser: world.rehearser.policy.id }
        : { actor: actor.id, environment: world.kind },
  });
  const record = (step: Step): void => {
    steps.push(step);
    options.onStep?.(step);
  };

  for (;;) {
    abort.throwIfAborted();
    if (turns >= limits.maxTurns) return finish({ reason: "max_turns", limit: limits.maxTurns });

    const request: GenerateRequest = { role: "act", messages: [...messages], tools, sampling: seededFor(sampling.act, rollout, turns, ACT) };
    if (continuable !== undefined && previous !== undefined && previous.promptTokens.length > 0) {
      request.promptTokens = continuable.continuePrompt(previous, appended, tools);
      if (request.promptTokens.length > limits.maxPromptTokens) return finish(promptTooLong(request.promptTokens.length, limits, "act"));
    }
    let generation: Generation;
    try {
      generation = await actor.generate(request, signal);
    } catch (error) {
      if (error instanceof ContextLengthError) return finish(promptTooLong(error.promptTokens, limits, "act"));
      throw error;
    }
    turns += 1;
    abort.throwIfAborted();

    if (generation.finishReason === "length" || generation.promptTokens.length > limits.maxPromptTokens) {
      record({ type: "act", generation, message: { role: "assistant", content: generation.text }, outcomes: [] });
      return finish(
        generation.finishReason === "length"
          ? { reason: "max_tokens", limit: sampling.act.maxTokens, detail: "act response" }
          : promptTooLong(generation.promptTokens.length, limits, "act"),
      );
    }

    const parsed = parseActOutput(generation, parserOptions);
    if (parsed.kind === "error") {
      const message: AssistantMessage = { role: "assistant", content: parsed.content };
      if (parsed.reasoning !== undefined) message.reasoning_content = parsed.reasoning;
      record({ type: "act", generation, message, outcomes: [] });
      return finish({ reason: "parse_error", code: parsed.code, detail: parsed.detail });
    }
    if (continuable !== undefined) {
      previous = generation;
      appended = [];
    }

    if (parsed.kind === "reply") {
      record({ type: "act", generation, message: parsed.message, outcomes: [] });
      messages.push(parsed.message);
      const next = await users.next({ task, messages, steps, sampling: seededFor(sampling.user, rollout, turns, USER), signal, device });
      if (next.kind === "end") return finish({ reason: "agent_stop" }, next.masked);
      record(next.step);
      messages.push(next.step.message);
      if (continuable !== undefined) appended.push(next.step.message);
      if (next.kind === "stop") return finish({ reason: "user_stop", marker: next.marker });
      continue;
    }

    const outcomes: ToolOutcome[] = [];
    const step: ActStep = { type: "act", generation, message: parsed.message, outcomes };
    let ended: Termination | undefined;
    for (let index = 0; index < parsed.calls.length; index += 1) {
      const call = parsed.calls[index]!;
      abort.throwIfAborted();
      let result: ToolResult;
      if (world.kind === "rehearsed") {
        const rehearseSampling = seededFor(sampling.rehearse, rollout, turns, REHEARSE + index);
        const answer = await world.rehearser.rehearse(call, { history: messages, latestAct: parsed.message }, rehearseSampling, signal);
        if (answer.kind === "too_long") {
          ended = promptTooLong(answer.promptTokens, limits, "rehearse");
          break;
        }
        if (answer.kind === "failed") {
          result = { status: "error", callId: call.id, name: call.name, error: { code: answer.code, message: answer.detail } };
          outcomes.push({ provenance: "rehearsed", call, result, generation: answer.generation });
          ended =
            answer.code === "TRUNCATED"
              ? { reason: "max_tokens", limit: sampling.rehearse.maxTokens, detail: REHEARSE_TRUNCATED_DETAIL }
              : { reason: "env_error", code: answer.code, detail: answer.detail };
          break;
        }
        result = answer.result;
        if (answer.kind === "rehearsed") {
          outcomes.push({ provenance: "rehearsed", call, result, generation: answer.generation });
          if (answer.generation.promptTokens.length > limits.maxPromptTokens) {
            ended = promptTooLong(answer.generation.promptTokens.length, limits, "rehearse");
            break;
          }
        } else {
          outcomes.push({ provenance: "rehearsed", call, result });
        }
      } else {
        try {
          result = await world.real.call(call);
        } catch (error) {
          ended = { reason: "env_error", code: "ENVIRONMENT_EXCEPTION", detail: `${call.name}: ${(error as Error).message}` };
          break;
        }
        outcomes.push({ provenance: "grounded", call, result });
      }
      if (result.status === "error") {
        toolErrors += 1;
        if (limits.maxToolErrors !== undefined && toolErrors >= limits.maxToolErrors) {
          ended = { reason: "tool_error", count: toolErrors };
          break;
        }
      }
    }
    record(step);
    if (ended !== undefined) return finish(ended);
    messages.push(parsed.message);
    for (const outcome of outcomes) {
      const message = toolMessage(outcome.result);
      messages.push(message);
      if (continuable !== undefined) appended.push(message);
    }
  }
}

function promptTooLong(length: number, limits: UnfoldLimits, role: string): Termination {
  return { reason: "max_tokens", limit: limits.maxPromptTokens, detail: `${role} prompt of ${length} tokens` };
}

interface Settings {
  limits: UnfoldLimits;
  sampling: Record<keyof RoleSampling, SamplingParams>;
}

let defaultSettings: Settings | undefined;

/** Limits, then the preset and per-role sampling overrides; `maxTokens` never above the response limit. */
function resolveSettings(options: SharedRolloutOptions): Settings {
  const defaults = options.limits === undefined && options.sampling === undefined && (options.preset ?? "training") === "training";
  // Validating the same defaults for every rollout would be a measurable part of a rollout's cost.
  if (defaults && defaultSettings !== undefined) return defaultSettings;
  const limits = UnfoldLimits.parse(options.limits ?? {});
  const preset = SAMPLING_PRESETS[options.preset ?? "training"];
  const resolve = (role: keyof RoleSampling): SamplingParams => {
    const params = SamplingParams.parse({ ...preset[role], ...options.sampling?.[role] });
    return { ...params, maxTokens: Math.min(params.maxTokens, limits.maxResponseTokens) };
  };
  const settings = { limits, sampling: { act: resolve("act"), rehearse: resolve("rehearse"), user: resolve("user") } };
  if (defaults) defaultSettings = settings;
  return settings;
}
