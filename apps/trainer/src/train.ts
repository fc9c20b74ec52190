/**
 * `envace train`: the EnvACE loop, top-down. Each step samples tasks, unfolds G rollouts per
 * task (self-unfolded in `envace` mode: the policy rehearses every tool response), scores them
 * without a real environment, computes role-wise GRPO advantages, takes one policy-gradient step,
 * logs, and now and then evaluates against the real environment.
 */
import { computeAdvantages, computeRoleAdvantages, type AdvantageBatch } from "@envace/grpo";
import type { Policy, PolicyRole, Task } from "@envace/protocol";
import type { Datum } from "@envace/training";
import { ConcurrencyLimit } from "@envace/concurrency";
import { InvariantError } from "@envace/errors";
import { IncrementalRenderer, rowsOf } from "@envace/trajectory";
import type { TrainConfig } from "./config/schema.js";
import {
  adamOptions,
  advantageOptions,
  evalSampling,
  miniBatching,
  policyLossOptions,
  rolloutLimits,
  scoringOptions,
  sftStageOptions,
} from "./config/to-options.js";
import { evaluate, type EvaluatedTaskDetail, type EvaluationResult } from "./evaluate.js";
import { formatInterval, wilsonInterval } from "./report/stats.js";
import { ProgressBar } from "./run/progress.js";
import { RunDirectory, stepName } from "./run/run-dir.js";
import { domainFromConfig } from "./data/index.js";
import type { Domain } from "./setup/domain.js";
import { resolveInitFrom } from "./setup/base-checkpoint.js";
import { createModel, loadModel, preflightModel } from "./setup/models.js";
import type { TrainedModel } from "./setup/trained-model.js";
import { goldRows, mergeContinuations, supervisedWarmStart } from "./sft.js";
import { CallCounter, rollouts } from "./rollout.js";
import { rewards } from "./reward.js";
import { policyUpdate, type SupervisedTerm } from "./update.js";
import { groundRollouts, openGrounding } from "./grounding.js";
import { stepMetrics } from "./metrics.js";
import { sampleTasks, shuffled } from "./sample.js";
import { KeptRollouts } from "./keep/log.js";
import type { MetricsRecord } from "./run/metrics-log.js";
import { openTrackers } from "./tracking/tracking.js";
import type { KeptEvalRecord } from "./keep/record.js";
import { keptEvalRecord, keptTrainRecords } from "./keep/collect.js";

export interface TrainOptions {
  /** Progress and notices (default: stderr). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export interface TrainResult {
  runDir: string;
  steps: number;
  /** The final held-out evaluations, one per rehearsal setting. */
  evaluations: EvaluationResult[];
}

/** The models a mode trains: one shared policy, or one per role (the per-role ablation). */
type Policies = Map<PolicyRole, TrainedModel>;

export async function train(config: TrainConfig, runDir: string, options: TrainOptions = {}): Promise<TrainResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Checked before the run directory is made: a missing or altered base is a config fault.
  const initFrom = config.init_from === undefined ? undefined : resolveInitFrom(config.init_from, config.model.type === "tiny" ? config.model : undefined);
  // So is a model or server that cannot train this config (e.g. a loss reduction that disagrees).
  await preflightModel(config);
  const run = RunDirectory.open(runDir, config);
  const domain = await domainFromConfig(config, run.path);
  try {
    return await trainOn(domain, config, run, log, options.signal, initFrom);
  } finally {
    await domain.close();
  }
}

async function trainOn(
  domain: Domain,
  config: TrainConfig,
  run: RunDirectory,
  log: (line: string) => void,
  signal: AbortSignal | undefined,
  initFrom: string | undefined,
): Promise<TrainResult> {
  const runDir = run.path;
  const started = Date.now();
  const elapsed = (): number => (Date.now() - started) / 1000;
  // Read before the warm start writes its checkpoint: did this run start from an earlier one?
  const resumedWarm = run.resuming;
  if (resumedWarm) log(`resuming ${runDir} after step ${run.resumeStep}`);
  const canEvaluate = config.eval.every_steps > 0 && domain.environment !== undefined;
  if (config.eval.every_steps > 0 && !canEvaluate) log(`held-out evaluation skipped: the ${domain.name} data has no real environment to evaluate against`);
  // Every record goes to metrics.jsonl, and as scalars to the trackers the config names.
  const trackers = openTrackers(config.tracking, runDir);
  const logRecord = (record: MetricsRecord): void => {
    run.metrics.append(record);
    for (const tracker of trackers) tracker.record(record);
  };
  // Off (keep 0), nothing is opened and nothing collected: no cost.
  const kept =
    config.rollout.keep === 0
      ? undefined
      : KeptRollouts.open(runDir, { maxBytes: config.rollout.keep_max_mb * 1_000_000, log, keep: (r) => resumedWarm && r.step <= run.resumeStep });

  const evaluations: EvaluationResult[] = [];
  const evaluateAt = async (step: number, model: TrainedModel): Promise<void> => {
    evaluations.length = 0;
    // One policy on these weights for every setting.
    const policy = await model.policy(`eval:${stepName(step)}`);
    for (const setting of config.eval.rehearsal) {
      const result = await evaluateHeldOut(config, domain, model, policy, setting, step, log, kept);
      evaluations.push(result);
      logRecord(evalRecord(step, setting, result, elapsed()));
    }
  };

  const base = await warmStart(config, domain, run, log, logRecord, canEvaluate ? (model) => evaluateAt(0, model) : undefined, initFrom);
  const policies = await trainedPolicies(config, run, base);
  const actModel = policies.get("act")!;
  const rehearseModel = policies.get("rehearse")!;
  // The caller-only baseline's simulator: a separate copy of the warm-started model that never trains.
  const frozen = config.environment === "simulator" ? await loadModel(config, run.checkpointPath("sft")) : undefined;
  const simulator = await frozen?.policy("simulator:frozen-sft");
  // The KL term's reference: the weights RL started from, frozen (on Tinker, a client that never
  // steps). The frozen simulator holds the same weights when there is one.
  const reference = config.actor.kl_coef > 0 ? (frozen ?? (await loadModel(config, run.checkpointPath("sft")))) : undefined;
  const counter = new CallCounter();
  // Hybrid grounding: its real-call budget spans the run (a resume reads back what was spent).
  const grounding = openGrounding(config, domain, run.metrics.all());
  const limit = new ConcurrencyLimit(config.rollout.concurrency);
  const trainedRoles: PolicyRole[] = config.mode === "grpo" ? ["act"] : ["act", "rehearse"];
  const bar = new ProgressBar("train", config.trainer.total_steps);
  bar.tick("", run.resumeStep);

  try {
    for (let step = run.resumeStep + 1; step <= config.trainer.total_steps; step++) {
      signal?.throwIfAborted();
      const stepStarted = Date.now();
      const tasks = sampleTasks(domain.train, config.rollout.tasks_per_step, config.seed, step);

      // Rollout: the policy acts; tool responses come from the policy itself (EnvACE), a frozen
      // simulator, a separate Rehearse policy (per-role), or the real environment.
      const actor = await actModel.policy(`${config.mode}:${stepName(step)}`);
      const rehearser = simulator ?? (rehearseModel === actModel ? actor : await rehearseModel.policy(`rehearse:${stepName(step)}`));
      const memories = new Map<string, string>();
      const trajectories = await rollouts({
        config,
        domain,
        tasks,
        actor,
        rehearser,
        counter,
        limit,
        step,
        ...(kept === undefined ? {} : { onMemory: (id: string, memory: string) => memories.set(id, memory) }),
      });

      // Grounding: a share of the rehearsed calls also executed for real (none when it is off).
      const grounded = await groundRollouts({
        grounding,
        domain,
        tasks,
        trajectories,
        counter,
        seed: config.seed,
        step,
        tokenizer: rehearseModel.tokenizer,
        concurrency: config.rollout.concurrency,
        ...(signal === undefined ? {} : { signal }),
      });

      // Reward, then role-wise advantages over each task's group of rollouts.
      const verdicts = await rewards(domain, tasks, trajectories);
      const trainingRows = trajectories.flatMap((t) => rowsOf(t, { roles: trainedRoles }));
      const rehearseVerdicts = domain.rehearseReward && (await rewards({ reward: domain.rehearseReward }, tasks, trajectories));
      const batch = rehearseVerdicts
        ? computeRoleAdvantages(
            trainingRows,
            (role) => (role === "rehearse" ? rehearseVerdicts : verdicts),
            advantageOptions(config.algorithm, config.rollout),
            grounded.advantages,
          )
        : computeAdvantages(trainingRows, verdicts, advantageOptions(config.algorithm, config.rollout), grounded.advantages);

      kept?.append(keptTrainRecords({ step, trajectories, verdicts, batch, memories, groups: config.rollout.keep }));

      // Update: clipped policy-gradient steps per trained model (one, or one per mini-batch).
      const update = await updatePolicies(config, policies, batch, reference, grounded.supervised);

      // Log, evaluate now and then, checkpoint.
      const record: MetricsRecord = {
        ...stepMetrics({
          step,
          batch,
          trajectories,
          verdicts,
          update,
          environmentCalls: counter.take(),
          elapsedSeconds: elapsed(),
          stepSeconds: (Date.now() - stepStarted) / 1000,
        }),
        ...grounded.record(update),
      };
      logRecord(record);
      bar.tick(`reward ${formatNumber((record.reward as Record<string, number>).mean)} ${((Date.now() - stepStarted) / 1000).toFixed(1)}s/step`);
      const final = step === config.trainer.total_steps;
      if (canEvaluate && (step % config.eval.every_steps === 0 || final)) await evaluateAt(step, actModel);
      if (step % config.trainer.save_every === 0 || final) {
        await run.saveCheckpoint(stepName(step), (dir) => saveAll(policies, dir));
        run.prune(2);
      }
    }
  } finally {
    for (const model of new Set([base, actModel, rehearseModel, frozen, reference])) model?.close();
  }
  if (resumedWarm && run.resumeStep === config.trainer.total_steps) log(`${runDir} already finished ${config.trainer.total_steps} steps`);
  return { runDir, steps: config.trainer.total_steps, evaluations };
}

/**
 * The warm-started model: from the SFT checkpoint when there is one, else trained now (or fresh,
 * with SFT off) and evaluated by `baseline` before its checkpoint closes the phase.
 */
async function warmStart(
  config: TrainConfig,
  domain: Domain,
  run: RunDirectory,
  log: (line: string) => void,
  logRecord: (record: MetricsRecord) => void,
  baseline: ((model: TrainedModel) => Promise<void>) | undefined,
  initFrom: string | undefined,
): Promise<TrainedModel> {
  if (run.hasCheckpoint("sft")) return loadModel(config, run.checkpointPath("sft"));
  const model = initFrom === undefined ? await createModel(config, domain) : await loadModel(config, initFrom);
  log(`model: ${model.describe()}${config.init_from === undefined ? "" : ` from ${config.init_from}`}`);
  if (config.sft.enabled && domain.gold) {
    // The renderer alone: a sampling policy would sync weights (ONNX) or save them (Tinker) for nothing.
    const renderer = new IncrementalRenderer(model.template, model.tokenizer);
    const { sft } = config;
    const context = model.contextTokens;
    const dataFor = (roles: readonly string[]): Datum[] => {
      const rows = domain.train.flatMap((task) =>
        goldRows(
          task,
          domain.gold!(task).filter((e) => roles.includes(e.role)),
          {
            renderer,
            rehearsePrompt: domain.rehearsePrompt,
            argumentWeight: sft.argument_weight,
          },
        ),
      );
      const all = mergeContinuations(rows);
      const data = all.filter((d) => d.tokens.length <= context);
      if (data.length < all.length)
        log(`sft: left out ${all.length - data.length} of ${all.length} sequences longer than the model's context (${context} tokens)`);
      return data;
    };
    // The curriculum stage first (e.g. Act alone, where copying forms), then every role.
    const stages = [...(sft.curriculum === undefined ? [] : [{ name: "sft curriculum", ...sft.curriculum }]), { name: "sft", ...sft }];
    const staged = stages.map((stage) => ({ stage, data: dataFor(stage.roles) }));
    const bar = new ProgressBar(
      "sft",
      staged.reduce((sum, { stage, data }) => sum + Math.ceil(data.length / sft.batch_size) * stage.epochs, 0),
    );
    let done = 0;
    for (const [index, { stage, data }] of staged.entries()) {
      await supervisedWarmStart(model.backend, data, {
        ...sftStageOptions(stage, sft, config.actor),
        shuffle: (items, epoch) => shuffled(items, config.seed * 1_000 + index * 100 + epoch),
        onBatch: ({ loss, tokens }) => {
          done += 1;
          logRecord({ kind: "sft", step: done, stage: stage.name, loss, tokens });
          bar.tick(`loss ${loss.toFixed(3)}`);
        },
      });
    }
  }
  await baseline?.(model);
  await run.saveCheckpoint("sft", (dir) => model.save(dir));
  return model;
}

/** The policies this mode trains, at the resumed step (or copies of the warm start). */
async function trainedPolicies(config: TrainConfig, run: RunDirectory, base: TrainedModel): Promise<Policies> {
  const from = run.resumeStep > 0 ? run.checkpointPath(stepName(run.resumeStep)) : run.checkpointPath("sft");
  if (config.mode !== "per-role") {
    const model = run.resumeStep > 0 ? await loadModel(config, `${from}/policy`) : base;
    return new Map([
      ["act", model],
      ["rehearse", model],
    ]);
  }
  const load = (role: PolicyRole): Promise<TrainedModel> => loadModel(config, run.resumeStep > 0 ? `${from}/${role}` : from);
  return new Map([
    ["act", await load("act")],
    ["rehearse", await load("rehearse")],
  ]);
}

async function saveAll(policies: Policies, dir: string): Promise<void> {
  const act = policies.get("act")!;
  const rehearse = policies.get("rehearse")!;
  if (act === rehearse) return act.save(`${dir}/policy`);
  await act.save(`${dir}/act`);
  await rehearse.save(`${dir}/rehearse`);
}

async function updatePolicies(
  config: TrainConfig,
  policies: Policies,
  batch: AdvantageBatch,
  reference: TrainedModel | undefined,
  /** Grounded Rehearse targets: they train whichever model plays the Rehearse role. */
  supervised?: SupervisedTerm,
): Promise<Awaited<ReturnType<typeof policyUpdate>>> {
  const loss = policyLossOptions(config.actor);
  const adam = adamOptions(config.actor, config.actor.lr);
  const act = policies.get("act")!;
  const rehearse = policies.get("rehearse")!;
  const ref = reference?.backend;
  // Rollouts are sampled at this temperature: the ratio's denominator is that distribution.
  const scoring = scoringOptions(config.rollout);
  const batching = miniBatching(config.actor);
  if (act === rehearse) return policyUpdate(act.backend, batch.rows, loss, adam, ref, scoring, batching, supervised);
  const [a, r] = await Promise.all([
    policyUpdate(
      act.backend,
      batch.rows.filter((s) => s.row.role === "act"),
      loss,
      adam,
      ref,
      scoring,
      batching,
    ),
    policyUpdate(
      rehearse.backend,
      batch.rows.filter((s) => s.row.role === "rehearse"),
      loss,
      adam,
      ref,
      scoring,
      batching,
      supervised,
    ),
  ]);
  return {
    loss: a.loss + r.loss,
    metrics: { ...prefixed("act", a.metrics), ...prefixed("rehearse", r.metrics) },
    tokens: a.tokens + r.tokens,
    ...(r.supervised === undefined ? {} : { supervised: r.supervised }),
  };
}

function prefixed(prefix: string, metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${prefix}/${k}`, v]));
}

async function evaluateHeldOut(
  config: TrainConfig,
  domain: Domain,
  model: TrainedModel,
  policy: Policy,
  setting: string,
  step: number,
  log: (line: string) => void,
  kept: KeptRollouts | undefined,
): Promise<EvaluationResult> {
  const real = domain.environment;
  if (real === undefined) throw new InvariantError(`${domain.name} has no real environment to evaluate against`);
  const bar = new ProgressBar(`eval ${setting} @${step}`, domain.test.length);
  const records = new Map<string, KeptEvalRecord>();
  const result = await evaluate({
    policy,
    tasks: domain.test,
    environment: real,
    reward: domain.success ?? domain.reward,
    rehearsal: setting,
    rehearsePrompt: domain.rehearsePrompt,
    ...(domain.judgeInstructions === undefined ? {} : { judgeInstructions: domain.judgeInstructions }),
    ...(domain.writeTools === undefined ? {} : { writeTools: domain.writeTools }),
    ...(domain.users === undefined ? {} : { users: () => domain.users! }),
    tokenizer: model.tokenizer,
    concurrency: config.rollout.concurrency,
    // The same seed at every step: each checkpoint meets the same random draws, which makes
    // evaluations along a run comparable with less noise.
    seed: config.seed,
    sampling: { act: evalSampling(config.eval) },
    limits: rolloutLimits(config.rollout),
    onProgress: () => {
      bar.tick();
    },
    ...(kept === undefined
      ? {}
      : {
          onTask: (task: Task, { entry, episode, verdict, comparisons }: EvaluatedTaskDetail) => {
            records.set(
              task.id,
              keptEvalRecord({
                step,
                setting: entry.setting,
                taskId: task.id,
                success: entry.success,
                verdict,
                ...(episode === undefined ? {} : { episode }),
                comparisons,
                ...(entry.error === undefined ? {} : { error: entry.error }),
              }),
            );
          },
        }),
  });
  // In task order, whatever order the tasks finished in.
  kept?.append(domain.test.flatMap((task) => records.get(task.id) ?? []));
  log(`eval @${step} rehearsal ${setting}: success ${formatInterval(wilsonInterval(result.successes, result.tasks))} of ${result.tasks}`);
  return result;
}

function evalRecord(step: number, setting: string, result: EvaluationResult, elapsedSeconds: number): { kind: string; step: number; [key: string]: unknown } {
  return {
    kind: "eval",
    step,
    rehearsal: setting,
    success_rate: result.successRate,
    success_ci95: (({ low, high }) => [low, high])(wilsonInterval(result.successes, result.tasks)),
    // One digit per held-out task, in task order, so runs on the same tasks compare pairwise.
    outcomes: result.entries.map((e) => (e.success ? "1" : "0")).join(""),
    reward_mean: result.meanReward,
    tasks: result.tasks,
    fidelity: {
      compared: result.fidelity.overall.compared,
      exact: result.fidelity.overall.exactRate,
      keys: result.fidelity.overall.keysRate,
      status: result.fidelity.overall.statusRate,
      failures: result.fidelity.overall.failures,
      failure_recall: result.fidelity.overall.failureRecall,
    },
    tokens_per_task: result.tokensPerTask,
    environment_calls_in_rehearsal: result.rehearsalEnvironmentCalls,
    elapsed_s: elapsedSeconds,
  };
}

function formatNumber(value: number | undefined): string {
  return value === undefined ? "–" : value.toFixed(3);
}
