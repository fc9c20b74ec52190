// Grounding: a share of a step's rehearsed calls also executed for real (`@envace/grounding`), between rollout and reward.
import { InvariantError } from "@envace/errors";
import type { AdvantageOptions } from "@envace/grpo";
import { GroundingBudget, groundStep, rehearseBonuses, rowKey, targetRows, type GroundingMetrics } from "@envace/grounding";
import type { Task, Tokenizer, Trajectory } from "@envace/protocol";
import { datumFromRow } from "@envace/training";
import { deriveSeed } from "@envace/trajectory";
import type { GroundingConfig } from "./config/grounding.js";
import type { TrainConfig } from "./config/schema.js";
import { groundingLimits } from "./config/to-options.js";
import type { CallCounter } from "./rollout.js";
import type { MetricsRecord } from "./run/metrics-log.js";
import type { Domain } from "./setup/domain.js";
import type { SupervisedTerm, UpdateResult } from "./update.js";

/** Defaults of the coefficients, used only with their use. */
export const DEFAULT_TARGET_COEF = 1;
export const DEFAULT_REWARD_COEF = 0.5;
/** Salt of the selection's seed, apart from the rollouts' (which derive from the same run seed and step). */
const SELECT_SALT = 0x67726e64;

/** What one step's grounding hands the rest of the step. Off, it is `NO_GROUNDING`: nothing changes. */
export interface StepGrounding {
  /** Row bonuses for the advantages (`use: reward`). */
  advantages: AdvantageOptions;
  /** The supervised term of the update (`use: target`). */
  supervised?: SupervisedTerm;
  /** The step's `grounding` metrics (every use logs them), and the update's supervised loss once known. */
  record: (update: UpdateResult) => { grounding?: Record<string, unknown> };
}

export const NO_GROUNDING: StepGrounding = { advantages: {}, record: () => ({}) };

/** The grounding of a run: its budget carries across steps, and across a resume (from the run's own log). */
export interface Grounding {
  config: GroundingConfig;
  budget: GroundingBudget;
}

/**
 * The run's grounding, or undefined when it is off (absent, or fraction 0: EnvACE exactly). On
 * resume, the calls already made are read back from the kept step records, so the run's cap holds.
 */
export function openGrounding(
  config: Pick<TrainConfig, "grounding">,
  domain: Pick<Domain, "name" | "environment">,
  kept: readonly MetricsRecord[],
): Grounding | undefined {
  const grounding = config.grounding;
  if (grounding === undefined || grounding.fraction === 0) return undefined;
  // The config refuses grounding for a data source without a real environment.
  if (domain.environment === undefined) throw new InvariantError(`grounding needs a real environment: the ${domain.name} data has none`);
  const used = kept.reduce((sum, r) => sum + (r.kind === "train" ? Number((r.grounding as { calls?: unknown } | undefined)?.calls ?? 0) : 0), 0);
  return { config: grounding, budget: new GroundingBudget(groundingLimits(grounding), used) };
}

export interface GroundRolloutsOptions {
  grounding: Grounding | undefined;
  domain: Pick<Domain, "environment" | "writeTools">;
  tasks: readonly Task[];
  trajectories: readonly Trajectory[];
  /** Every real call is counted in the step's `env_calls`. */
  counter: CallCounter;
  seed: number;
  step: number;
  /** The Rehearse role's tokenizer, for the supervised targets. */
  tokenizer: Tokenizer;
  concurrency: number;
  signal?: AbortSignal;
}

/** Ground one step's rollouts, and say what each use adds to the step. */
export async function groundRollouts(options: GroundRolloutsOptions): Promise<StepGrounding> {
  const { grounding, domain } = options;
  if (grounding === undefined) return NO_GROUNDING;
  const { config } = grounding;
  const byId = new Map(options.tasks.map((task) => [task.id, task]));
  const { grounded, metrics } = await groundStep({
    trajectories: options.trajectories,
    task: (id) => byId.get(id)!,
    environment: (task) => options.counter.wrap(domain.environment!(task)),
    budget: grounding.budget,
    fraction: config.fraction,
    select: config.select,
    seed: deriveSeed(options.seed, options.step, SELECT_SALT),
    ...(domain.writeTools === undefined ? {} : { writeTools: domain.writeTools }),
    concurrency: options.concurrency,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const result: StepGrounding = {
    advantages: {},
    record: (update) => ({ grounding: groundingRecord(config, metrics, update) }),
  };
  if (config.use.includes("reward")) {
    const bonuses = rehearseBonuses(grounded, config.reward_coef ?? DEFAULT_REWARD_COEF);
    result.advantages = { bonus: (row) => (row.role === "rehearse" ? (bonuses.get(rowKey(row)) ?? 0) : 0) };
  }
  if (config.use.includes("target")) {
    const data = targetRows(grounded, options.tokenizer).map((row) => ({ taskId: row.taskId, datum: datumFromRow(row, 0) }));
    result.supervised = { data, coef: config.target_coef ?? DEFAULT_TARGET_COEF };
  }
  return result;
}

/** The fidelity rates, logged with `use: metric`; the counts and calls are logged always (a resume reads `calls` back). */
const FIDELITY_KEYS = ["exact", "keys", "status", "unreadable", "failures", "failure_recall"] as const;

/** The step record's `grounding`: the counts, the fidelity (`use: metric`), and the supervised term's loss where it trained. */
export function groundingRecord(config: GroundingConfig, metrics: GroundingMetrics, update: Pick<UpdateResult, "supervised">): Record<string, unknown> {
  const measured = config.use.includes("metric")
    ? metrics
    : Object.fromEntries(Object.entries(metrics).filter(([key]) => !(FIDELITY_KEYS as readonly string[]).includes(key)));
  return {
    ...measured,
    fraction: config.fraction,
    select: config.select,
    ...(update.supervised === undefined ? {} : { target_loss: update.supervised.loss, target_tokens: update.supervised.tokens }),
  };
}
