import { pyEquals, PyException } from "@envace/python-text";
import { Tau2Environment } from "./environment.js";
import type { Tau2Domain } from "./load.js";
import type { Action, EnvAssertion, RewardType, Tau2Message, Tau2Task, Tau2ToolCall } from "./task.js";

/**
 * Why a τ² conversation ended, in upstream's words. Only `user_stop` and `agent_stop` are
 * scored; every other ending scores 0 (and `infrastructure_error` is left out of metrics).
 */
export type Tau2Termination = "user_stop" | "agent_stop" | "max_steps" | "too_many_errors" | "agent_error" | "user_error" | "infrastructure_error";

/** The judge of natural-language assertions (the NL_ASSERTION component). */
export interface NlAssertionJudge {
  /**
   * One verdict per assertion, in order. Throw when no verdict can be had (server down,
   * unparsable output after retries): the rollout is then masked, never scored 0.
   */
  judge(conversation: readonly Tau2Message[], assertions: readonly string[], signal?: AbortSignal): Promise<NlAssertionVerdict[]>;
}

export interface NlAssertionVerdict {
  readonly assertion: string;
  readonly met: boolean;
  readonly justification: string;
}

export interface DbCheck {
  readonly match: boolean;
  readonly reward: number;
  /** The hash of the state the gold actions reach. */
  readonly goldHash: string;
  /** The hash of the state the conversation's writes reach. */
  readonly predictedHash: string;
}

/** The evaluation of one conversation: the reward and every check behind it. */
export interface Tau2RewardInfo {
  /** The product of the components in `basis`. */
  readonly reward: number;
  /** Set when a component could not be computed (the judge failed); the reward is then meaningless. */
  readonly masked?: string;
  readonly basis: readonly RewardType[];
  /** The reward of each component in `basis`. */
  readonly breakdown: Partial<Record<RewardType, number>>;
  readonly db?: DbCheck;
  readonly envAssertions: readonly { assertion: EnvAssertion; met: boolean; error?: string }[];
  readonly actions: readonly { action: Action; matched: boolean }[];
  readonly communicate: readonly { info: string; met: boolean }[];
  readonly nlAssertions?: readonly NlAssertionVerdict[];
  readonly note?: string;
}

/** Upstream's success rule: a reward within 1e-6 of 1. */
export function isSuccess(reward: number): boolean {
  return reward >= 1 - 1e-6 && reward <= 1 + 1e-6;
}

export interface EvaluatorOptions {
  /** The NL_ASSERTION judge; tasks that need it are masked without one. */
  readonly judge?: NlAssertionJudge;
  /**
   * Throw when replaying a write gives another response than the conversation recorded
   * (upstream does so for live runs). Off by default, as upstream re-grades saved runs.
   */
  readonly strictReplay?: boolean;
}

/**
 * Upstream's evaluator (`EvaluationType.ALL`): the DB check replays the conversation's writes
 * on a fresh environment and the gold actions on another and compares their hashes; then
 * ENV_ASSERTION, ACTION, COMMUNICATE and NL_ASSERTION; the reward is the product of the
 * components the task's `reward_basis` names.
 */
export class Tau2Evaluator {
  private readonly goldHashes = new Map<string, { agent: string; user: string | null }>();

  constructor(
    readonly domain: Tau2Domain,
    private readonly options: EvaluatorOptions = {},
  ) {}

  async evaluate(
    task: Tau2Task,
    messages: readonly Tau2Message[],
    termination: Tau2Termination | (string & {}),
    signal?: AbortSignal,
  ): Promise<Tau2RewardInfo> {
    const empty = { envAssertions: [], actions: [], communicate: [] };
    if (termination !== "agent_stop" && termination !== "user_stop") {
      return { reward: 0, basis: [], breakdown: {}, ...empty, note: `terminated prematurely: ${termination}` };
    }
    const criteria = task.evaluation_criteria;
    if (criteria === null) return { reward: 1, basis: [], breakdown: {}, ...empty, note: "no evaluation criteria" };
    const basis = criteria.reward_basis;

    const env = this.checkEnvironment(task, messages);
    const actions = (criteria.actions ?? []).map((action) => ({ action, matched: toolCalls(messages).some((call) => actionMatches(action, call)) }));
    const actionReward = actions.every((check) => check.matched) ? 1 : 0;
    const communicate = (criteria.communicate_info ?? []).map((info) => ({ info, met: communicated(messages, info) }));
    const communicateReward = communicate.every((check) => check.met) ? 1 : 0;

    let nlAssertions: NlAssertionVerdict[] | undefined;
    let masked: string | undefined;
    if (basis.includes("NL_ASSERTION") && (criteria.nl_assertions ?? []).length > 0) {
      const assertions = criteria.nl_assertions ?? [];
      if (this.options.judge === undefined) masked = "NL_ASSERTION needs a judge and none was given";
      else {
        try {
          nlAssertions = await this.options.judge.judge(messages, assertions, signal);
        } catch (error) {
          masked = `NL_ASSERTION judge failed: ${(error as Error).message}`;
        }
      }
    }
    const nlReward = nlAssertions === undefined || nlAssertions.every((verdict) => verdict.met) ? 1 : 0;

    const breakdown: Partial<Record<RewardType, number>> = {};
    let reward = 1;
    if (basis.includes("DB") || basis.includes("ENV_ASSERTION")) {
      if (basis.includes("DB")) breakdown.DB = env.dbReward;
      if (basis.includes("ENV_ASSERTION")) breakdown.ENV_ASSERTION = env.assertionReward;
      reward *= env.reward(basis);
    }
    if (basis.includes("ACTION")) {
      breakdown.ACTION = actionReward;
      reward *= actionReward;
    }
    if (basis.includes("NL_ASSERTION") && masked === undefined) {
      breakdown.NL_ASSERTION = nlReward;
      reward *= nlReward;
    }
    if (basis.includes("COMMUNICATE")) {
      breakdown.COMMUNICATE = communicateReward;
      reward *= communicateReward;
    }
    return {
      reward,
      ...(masked === undefined ? {} : { masked }),
      basis,
      breakdown,
      ...(env.db === undefined ? {} : { db: env.db }),
      envAssertions: env.assertions,
      actions,
      communicate,
      ...(nlAssertions === undefined ? {} : { nlAssertions }),
    };
  }

  /**
   * The hashes the gold actions reach from the task's initial state (computed once per task), on
   * an environment that is never solo, as upstream's: the user's gold actions are the user's.
   */
  gold(task: Tau2Task): { agent: string; user: string | null } {
    let hashes = this.goldHashes.get(task.id);
    if (hashes === undefined) {
      const environment = Tau2Environment.forTask(this.domain, task, { strict: this.options.strictReplay ?? false, solo: false });
      for (const action of task.evaluation_criteria?.actions ?? []) {
        try {
          environment.makeToolCall(action.name, action.requestor, action.arguments);
        } catch (error) {
          // Upstream logs a failing gold action and goes on; some gold actions fail on purpose.
          if (!(error instanceof PyException)) throw error;
        }
      }
      hashes = { agent: environment.dbHash(), user: environment.userDbHash() };
      this.goldHashes.set(task.id, hashes);
    }
    return hashes;
  }

  /** The conversation's final state: its writes replayed on a fresh environment (solo in solo mode). */
  replay(task: Tau2Task, messages: readonly Tau2Message[]): Tau2Environment {
    const environment = new Tau2Environment(this.domain);
    environment.setState(task.initial_state, messages, { strict: this.options.strictReplay ?? false });
    return environment;
  }

  private checkEnvironment(task: Tau2Task, messages: readonly Tau2Message[]) {
    const criteria = task.evaluation_criteria!;
    if (criteria.actions === null && criteria.env_assertions === null) {
      return { dbReward: 1, assertionReward: 1, assertions: [], db: undefined, reward: () => 1 };
    }
    const predicted = this.replay(task, messages);
    const gold = this.gold(task);
    const predictedHash = predicted.dbHash();
    const match = predictedHash === gold.agent && predicted.userDbHash() === gold.user;
    const dbReward = match ? 1 : 0;
    const assertions = (criteria.env_assertions ?? []).map((assertion) => {
      try {
        return { assertion, met: predicted.runEnvAssertion(assertion) };
      } catch (error) {
        if (!(error instanceof PyException)) throw error;
        return { assertion, met: false, error: `${error.pyType}: ${error.text}` };
      }
    });
    const assertionReward = assertions.every((check) => check.met) ? 1 : 0;
    return {
      dbReward,
      assertionReward,
      assertions,
      db: { match, reward: dbReward, goldHash: gold.agent, predictedHash },
      reward: (basis: readonly RewardType[]) => (basis.includes("DB") ? dbReward : 1) * (basis.includes("ENV_ASSERTION") ? assertionReward : 1),
    };
  }
}

/** Every tool call of the conversation, the agent's and the user's, in order. */
function toolCalls(messages: readonly Tau2Message[]): Tau2ToolCall[] {
  return messages.flatMap((message) => ((message.role === "assistant" || message.role === "user") && message.tool_calls !== null ? message.tool_calls : []));
}

/**
 * Upstream's `Action.compare_with_tool_call`: same name, and equal values for `compare_args`
 * (or, when it is unset, for every argument the call itself passed).
 */
export function actionMatches(action: Action, call: Tau2ToolCall): boolean {
  if (action.name !== call.name) return false;
  const keys = action.compare_args ?? [...call.arguments.keys()];
  if (keys.length === 0) return true;
  for (const key of keys) {
    const inCall = call.arguments.has(key);
    const inAction = action.arguments.has(key);
    if (inCall !== inAction) return false;
    if (inCall && !pyEquals(call.arguments.get(key)!, action.arguments.get(key)!)) return false;
  }
  return true;
}

/** Upstream's COMMUNICATE check: a case-insensitive substring of an agent message, commas removed. */
export function communicated(messages: readonly Tau2Message[], info: string): boolean {
  const needle = info.toLowerCase();
  return messages.some(
    (message) =>
      message.role === "assistant" &&
      message.content !== null &&
      message.content.trim() !== "" &&
      message.content.toLowerCase().replaceAll(",", "").includes(needle),
  );
}
