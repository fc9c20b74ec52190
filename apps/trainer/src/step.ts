import { advantageMetrics, roleMetrics, verdictsOf, type AdvantageBatch, type PolicyLossConfig, type ScoredRow } from "@envace/grpo";
import type { Environment, Policy, RewardVerdict, Task, Trajectory } from "@envace/protocol";
import type { ConcurrencyLimit } from "@envace/concurrency";
import { deriveSeed, RehearsalEnvironment, unfoldGroup, userToolsOf } from "@envace/trajectory";
import { Rng, datumFromRow, type AdamParams, type ScoringOptions, type TrainingBackend } from "@envace/training";
import type { ActorConfig, TrainConfig } from "./config/schema.js";
import { CountingEnvironment } from "./counting-environment.js";
import type { Domain } from "./setup/domain.js";
import type { MetricsRecord } from "./run/metrics-log.js";

/** Counts calls made to real environments over a step, so a run can show how many it made (0 in `envace` mode). */
export class CallCounter {
  private count = 0;

  wrap(environment: Environment): Environment {
    return new CountingEnvironment(environment, () => {
      this.count += 1;
    });
  }

  /** Calls since the last `take`. */
  take(): number {
    const n = this.count;
    this.count = 0;
    return n;
  }
}

export interface RolloutOptions {
  config: Pick<TrainConfig, "environment" | "rollout" | "seed">;
  domain: Pick<Domain, "name" | "environment" | "rehearsePrompt" | "users">;
  tasks: readonly Task[];
  /** The policy in the Act role. */
  actor: Policy;
  /** The policy in the Rehearse role: the actor (EnvACE), a frozen simulator, or a per-role policy. */
  rehearser: Policy;
  counter: CallCounter;
  limit: ConcurrencyLimit;
  /** The training step (seeds its rollouts). */
  step: number;
}

/** G rollouts of each task: rehearsed by `rehearser`, or grounded when the config's environment is real. */
export async function rollouts(options: RolloutOptions): Promise<Trajectory[]> {
  const { config, domain, actor, rehearser, counter, limit } = options;
  const limits = {
    maxTurns: config.rollout.max_turns,
    maxResponseTokens: config.rollout.max_response_tokens,
    maxPromptTokens: config.rollout.max_prompt_tokens,
  };
  // Seeded per run, step and task (and, inside the group, per rollout and request), so a run
  // samples the same tokens however its rollouts interleave.
  const sampling = (index: number) => {
    const params = { temperature: config.rollout.temperature, topP: config.rollout.top_p, seed: deriveSeed(config.seed, options.step, index) };
    return { act: params, rehearse: params };
  };
  const real = domain.environment;
  if (config.environment === "real" && real === undefined) throw new Error(`the ${domain.name} data has no real environment: use environment self or simulator`);
  // A task drawn more than once in a step (more tasks per step than tasks) is one larger group:
  // GRPO groups by task, so two groups of one task would be one anyway.
  const draws = new Map<Task, number>();
  for (const task of options.tasks) draws.set(task, (draws.get(task) ?? 0) + 1);
  const groups = [...draws].map(([task, times], index) =>
    unfoldGroup({
      task,
      actor,
      // A real environment holds episode state: one per rollout. A rehearsal environment per group.
      environment: config.environment === "real" ? () => counter.wrap(real!(task)) : new RehearsalEnvironment({ policy: rehearser, prompt: domain.rehearsePrompt }),
      // Dual control (τ² telecom): the user's own side, the real environment's (counted too) or imagined.
      userEnvironment:
        config.environment === "real"
          ? (_, environment) => (environment instanceof RehearsalEnvironment || environment.user === undefined ? undefined : counter.wrap(environment.user))
          : userToolsOf(task).length > 0
            ? new RehearsalEnvironment({ policy: rehearser, prompt: domain.rehearsePrompt })
            : undefined,
      size: config.rollout.rollouts_per_task * times,
      ...(domain.users === undefined ? {} : { users: domain.users }),
      limit,
      limits,
      preset: "training",
      sampling: sampling(index),
    }),
  );
  return (await Promise.all(groups)).flat();
}

/** Each rollout's reward, computed from the trajectory (replayed, never run against a live environment). */
export async function rewards({ reward }: Pick<Domain, "reward">, tasks: readonly Task[], trajectories: readonly Trajectory[]): Promise<Map<string, RewardVerdict>> {
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const scored = await Promise.all(
    // A rollout masked while it unfolded (its gate's judge failed) stays masked: never scored.
    trajectories.map(async (trajectory) => ({
      ...trajectory,
      reward: trajectory.reward?.status === "masked" ? trajectory.reward : await reward(trajectory, byId.get(trajectory.taskId)!),
    })),
  );
  return verdictsOf(scored);
}

export function adamParams(learningRate: number, actor: ActorConfig): AdamParams {
  return { learningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: actor.weight_decay, gradClipNorm: actor.grad_clip };
}

export function policyLossConfig(actor: ActorConfig): PolicyLossConfig {
  return {
    epsLow: actor.clip_ratio_low,
    epsHigh: actor.clip_ratio_high,
    dualClip: actor.clip_ratio_c,
    klCoef: actor.kl_coef,
    entropyCoef: actor.entropy_coeff,
    aggregation: actor.loss_agg_mode,
  };
}

export interface UpdateResult {
  loss: number;
  metrics: Record<string, number>;
  /** Loss tokens (output tokens of the rows trained). */
  tokens: number;
}

/**
 * One policy-gradient step on the scored rows: their datums, the clipped loss, AdamW. With a KL
 * term, `reference` (a frozen copy of the weights RL started from) scores every datum first.
 */
export async function policyUpdate(
  backend: TrainingBackend,
  rows: readonly ScoredRow[],
  loss: PolicyLossConfig,
  adam: AdamParams,
  reference?: Pick<TrainingBackend, "forward">,
  /** The rollouts' sampling temperature: the learner (and the reference) score that distribution. */
  scoring: ScoringOptions = {},
): Promise<UpdateResult> {
  const data = rows.filter((s) => s.row.outputTokens.length > 0).map((s) => datumFromRow(s.row, s.advantage));
  if (data.length === 0) return { loss: 0, metrics: {}, tokens: 0 };
  if (loss.klCoef > 0) {
    if (reference === undefined) throw new Error("a KL term needs the reference model's log-probabilities");
    const refs = await reference.forward(data, scoring);
    data.forEach((d, i) => (d.refLogprobs = refs[i]!));
  }
  const result = await backend.forwardBackward(data, { type: "grpo", config: loss }, scoring);
  const optim = await backend.optimStep(adam);
  return { loss: result.loss, metrics: { ...result.metrics, ...optim }, tokens: data.reduce((s, d) => s + d.mask.reduce((a, m) => a + m, 0), 0) };
}

/** A seeded permutation. */
export function shuffled<T>(items: T[], seed: number): T[] {
  const rng = Rng.fromSeed(seed);
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.nextUint32() % (i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * The tasks of a step, drawn from a stream of seeded permutations of the training tasks (a new
 * permutation each pass), without replacement within the step: a task that the stream offers
 * again before the step is full is deferred to the next step, so every task still comes once
 * per pass, give or take a deferral. Only when `perStep` exceeds the number of tasks does a step
 * hold a task more than once (every task as often as it fits, the rest at random); `rollouts`
 * gives such a task one larger group. A pure function of (seed, step): it replays the stream
 * from step 1, so a resumed run samples what the uninterrupted one would have.
 */
export function sampleTasks<T>(tasks: readonly T[], perStep: number, seed: number, step: number): T[] {
  if (tasks.length === 0) throw new Error("no training tasks");
  if (!(Number.isInteger(perStep) && perStep > 0)) throw new Error(`tasks per step must be a positive integer, got ${perStep}`);
  const n = tasks.length;
  if (perStep >= n) {
    // Every task fits in every step: all of them, as many whole times as fit, then a seeded remainder.
    const whole = Math.floor(perStep / n);
    const rest = shuffled([...tasks], seed * 7_919 + step).slice(0, perStep - whole * n);
    return [...Array.from({ length: whole }, () => tasks).flat(), ...rest];
  }
  let pass = 0;
  let stream: number[] = [];
  const deferred: number[] = [];
  const next = (): number => {
    if (stream.length === 0) stream = shuffled([...tasks.keys()], seed * 7_919 + pass++).reverse();
    return stream.pop()!;
  };
  let chosen: number[] = [];
  for (let s = 1; s <= step; s++) {
    chosen = [];
    const taken = new Set<number>();
    const skipped: number[] = [];
    const offer = (i: number): void => {
      if (taken.has(i)) skipped.push(i);
      else {
        taken.add(i);
        chosen.push(i);
      }
    };
    while (deferred.length > 0 && chosen.length < perStep) offer(deferred.shift()!);
    while (chosen.length < perStep) offer(next());
    deferred.push(...skipped);
  }
  return chosen.map((i) => tasks[i]!);
}

const HISTOGRAM_EDGES = Array.from({ length: 17 }, (_, i) => -2 + i * 0.25);

/** Counts of values per bin of `edges`; values outside go to the first or last bin. */
export function histogram(values: readonly number[], edges: readonly number[] = HISTOGRAM_EDGES): number[] {
  const counts = new Array<number>(edges.length - 1).fill(0);
  for (const value of values) {
    let bin = edges.findIndex((edge, i) => i > 0 && value < edge) - 1;
    if (bin < 0) bin = value < edges[0]! ? 0 : counts.length - 1;
    counts[bin]! += 1;
  }
  return counts;
}

export interface StepArtifacts {
  step: number;
  batch: AdvantageBatch;
  trajectories: readonly Trajectory[];
  verdicts: ReadonlyMap<string, RewardVerdict>;
  update: UpdateResult;
  environmentCalls: number;
  elapsedSeconds: number;
  stepSeconds: number;
}

/** The `metrics.jsonl` record of one training step. */
export function stepMetrics(a: StepArtifacts): MetricsRecord {
  const scored = [...a.verdicts.values()].flatMap((v) => (v.status === "scored" ? [v.value] : []));
  const roles = roleMetrics(a.batch);
  const byRole = <K extends keyof (typeof roles)[number]>(key: K) => Object.fromEntries(roles.map((m) => [m.role, m[key]]));
  const terminations: Record<string, number> = {};
  const parseErrors: Record<string, number> = { total: 0 };
  for (const t of a.trajectories) {
    const term = t.termination;
    terminations[term.reason] = (terminations[term.reason] ?? 0) + 1;
    if (term.reason === "parse_error" || term.reason === "env_error") {
      parseErrors.total! += 1;
      parseErrors[term.code] = (parseErrors[term.code] ?? 0) + 1;
    }
  }
  const m = a.update.metrics;
  return {
    kind: "train",
    step: a.step,
    elapsed_s: a.elapsedSeconds,
    step_s: a.stepSeconds,
    reward: { mean: mean(scored), ...byRole("rewardMean") },
    success_rate: scored.length === 0 ? 0 : scored.filter((v) => v >= 1 - 1e-9).length / scored.length,
    masked: a.batch.masked.length,
    // Why rollouts were masked (judge failures while scoring or while gating a user turn).
    masked_reasons: a.batch.masked.reduce<Record<string, number>>((counts, m) => ({ ...counts, [m.reason]: (counts[m.reason] ?? 0) + 1 }), {}),
    rows: byRole("rows"),
    length: Object.fromEntries(roles.map((r) => [r.role, r.rows === 0 ? 0 : r.outputTokens / r.rows])),
    advantage: Object.fromEntries(roles.map((r) => [r.role, { mean: r.advantageMean, std: r.advantageStd, min: r.advantageMin, max: r.advantageMax }])),
    advantage_hist: {
      edges: HISTOGRAM_EDGES,
      ...Object.fromEntries(roles.map((r) => [r.role, histogram(a.batch.rows.filter((s) => s.groupRole === r.role).map((s) => s.advantage))])),
    },
    zero_advantage_groups: advantageMetrics(a.batch)["batch/zero_advantage_groups"],
    loss: a.update.loss,
    loss_tokens: a.update.tokens,
    clip_fraction: m["clip_fraction:mean"],
    // Two different divergences, named: to the frozen reference (the KL term), and between the
    // sampler's and the learner's log-probabilities of the sampled tokens (off-policy drift).
    ref_kl: m["ref_kl:mean"],
    sampler_kl: m["sampler_kl:mean"],
    ratio: { mean: m["ratio:mean"], min: m["ratio:min"], max: m["ratio:max"] },
    entropy: m["entropy:mean"],
    grad_norm: m["grad_norm:mean"] ?? m["grad_norm:max"],
    terminations,
    parse_errors: parseErrors,
    env_calls: a.environmentCalls,
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length;
}
