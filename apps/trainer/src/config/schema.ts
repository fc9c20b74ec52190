import { BaselineMode, defaultPolicyLossConfig, LossAggregation } from "@envace/grpo";
import { RehearsalSettingText } from "@envace/rehearsal";
import { z } from "zod";
import { GroundingConfig, groundingIssues } from "./grounding.js";

/**
 * The `envace train` configuration. Keys are snake_case, grouped and named as verl users know
 * them; every object is strict, so a misspelt key is an error rather than a silent default.
 *
 * The defaults are the embedded default, `presets/default.yaml`: an empty config is that preset.
 * They are written out here rather than read from the file so that the schema stays one plain
 * declaration, readable without the file system; `defaults.test.ts` compares the two key by key.
 */

const positiveInt = z.number().int().positive();
/** The roles supervised rows can teach. */
const SftRole = z.enum(["act", "rehearse", "reflect"]);
type SftRole = z.infer<typeof SftRole>;

/** Every role the supervised stages teach (the curriculum's and the last stage's). */
export function supervisedRoles(sft: { roles: readonly SftRole[]; curriculum?: { roles: readonly SftRole[] } | undefined }): SftRole[] {
  return [...sft.roles, ...(sft.curriculum?.roles ?? [])];
}

export const DataConfig = z.strictObject({
  /** `builtin`: the generated tool domain; `cm2`: CM2 records (.json/.jsonl); `verl`: verl Parquet. */
  source: z.enum(["builtin", "cm2", "verl"]).default("builtin"),
  /** The training file for `cm2` and `verl`. */
  path: z.string().optional(),
  /** Held-out file for `cm2` and `verl`; without it no held-out evaluation runs. */
  test_path: z.string().optional(),
  /** `builtin`: number of generated training and held-out tasks (disjoint seeds). */
  train_tasks: positiveInt.default(512),
  test_tasks: positiveInt.default(128),
});
export type DataConfig = z.infer<typeof DataConfig>;

export const TinyModelConfig = z.strictObject({
  type: z.literal("tiny"),
  vocab_size: positiveInt.default(768),
  hidden_size: positiveInt.default(96),
  intermediate_size: positiveInt.default(256),
  num_hidden_layers: positiveInt.default(3),
  num_attention_heads: positiveInt.default(4),
  max_position_embeddings: positiveInt.default(512),
  rope_theta: z.number().positive().default(10_000),
  /**
   * Standard deviation of the initial weights. Hugging Face's 0.02 suits models of width ~768; at
   * width ~100 it leaves attention scores near zero and copying slow to form (see the README);
   * about 1/√hidden_size suits the tiny model.
   */
  initializer_range: z.number().positive().default(0.1),
  /** How the tokenizer splits words: `isolated` makes a name one token after a space and inside JSON, so copying it is an identity. */
  pretokenizer: z.enum(["isolated", "gpt2"]).default("isolated"),
});
export type TinyModelConfig = z.infer<typeof TinyModelConfig>;

export const HfModelConfig = z.strictObject({
  type: z.literal("hf"),
  /**
   * A Hugging Face model folder with `tokenizer.json` and `tokenizer_config.json` (its chat
   * template). The weights live on the training server; this gives the tokens.
   */
  path: z.string().min(1),
  /** The model's context length, in tokens. */
  context_tokens: positiveInt.default(32_768),
});
export type HfModelConfig = z.infer<typeof HfModelConfig>;

/** The model trained: the built-in tiny one (in-process backend) or a Hugging Face model on a Tinker server. */
export const ModelConfig = z.discriminatedUnion("type", [TinyModelConfig, HfModelConfig]);
export type ModelConfig = z.infer<typeof ModelConfig>;

export const BackendConfig = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("in-process") }),
  z.strictObject({
    type: z.literal("tinker"),
    /** Hosted Tinker, SkyRL tx, or `envace`'s own Tinker server. */
    base_url: z.url(),
    base_model: z.string().min(1),
    api_key_env: z.string().default("TINKER_API_KEY"),
    /** How long one request is retried (connection errors, 408, 429, 5xx) before the run stops with an error. */
    retry_deadline_s: z.number().positive().default(300),
    lora_rank: z.number().int().min(0).default(32),
    /**
     * How the server reduces losses: `sum` (hosted Tinker) or `datum-token-mean` (SkyRL tx's JAX
     * backend). No default: unless the server declares it (envace's own does), training stops
     * with a line asking for it rather than scaling gradients on a guess.
     */
    reduction: z.enum(["sum", "datum-token-mean"]).optional(),
    /**
     * `surrogate` (default): our exact loss, through one extra forward pass per step where the
     * server's losses cannot express it (dual clip, KL); `native`: Tinker's own losses only, so
     * the config is refused when `actor` asks for a term they cannot express.
     */
    loss_strategy: z.enum(["native", "surrogate"]).default("surrogate"),
  }),
]);
export type BackendConfig = z.infer<typeof BackendConfig>;

export const SftConfig = z.strictObject({
  /** Off by default: the default starts from the shipped base, which is this warm start already done. */
  enabled: z.boolean().default(false),
  epochs: positiveInt.default(3),
  batch_size: positiveInt.default(16),
  lr: z.number().positive().default(3e-3),
  /** Linear warm-up over this fraction of the batches, then cosine decay to 10% of `lr`; `constant` keeps `lr`. */
  lr_schedule: z.enum(["cosine", "constant"]).default("cosine"),
  warmup_ratio: z.number().min(0).max(1).default(0.05),
  /**
   * Which roles the gold trajectories teach. `reflect` (built-in domain): each gold dialogue as a
   * rehearsal attempt judged by its real outcome, and where a write was declined, the attempt
   * that makes it judged as failing; prompted with the domain's short reflect instructions.
   */
  roles: z.array(SftRole).min(1).default(["act", "rehearse"]),
  /** Loss weight of the argument values of tool calls in Act targets (1: every token alike). */
  argument_weight: z.number().min(1).default(1),
  /**
   * Built-in domain: also a Rehearse row for the write each failing-precondition task's gold
   * solution declines, answered with the shop's typed refusal. Gold solutions check before they
   * write, so without these the Rehearse role never sees a write fail.
   */
  declined_writes: z.boolean().default(false),
  /**
   * An earlier stage on some roles only, before the stage above. Act alone first lets a small
   * model learn to copy arguments before the Rehearse rows' unpredictable values join in.
   */
  curriculum: z
    .strictObject({
      roles: z.array(SftRole).min(1),
      epochs: positiveInt,
      lr: z.number().positive(),
      lr_schedule: z.enum(["cosine", "constant"]).default("cosine"),
    })
    .optional(),
});
export type SftConfig = z.infer<typeof SftConfig>;

export const RolloutConfig = z.strictObject({
  /** Tasks sampled per training step (verl `data.train_batch_size`). */
  tasks_per_step: positiveInt.default(8),
  /** Rollouts per task, the GRPO group size G (verl `actor_rollout_ref.rollout.n`). */
  rollouts_per_task: positiveInt.default(8),
  /**
   * Sampling temperature of training rollouts; the learner scores softmax(logits / temperature) to
   * match. Default 0.6, the evaluation's (`TrainConfig` fills it in, as it depends on the
   * backend); 1 with a Tinker backend, which scores at temperature 1 only.
   */
  temperature: z.number().gt(0).optional(),
  /**
   * Must stay 1: a truncated nucleus is not the distribution the learner scores, so every policy
   * ratio would be off by the truncation (use temperature to sharpen rollouts instead).
   */
  top_p: z.number().gt(0).max(1).default(1),
  max_turns: positiveInt.default(8),
  max_response_tokens: positiveInt.default(64),
  max_prompt_tokens: positiveInt.default(500),
  /**
   * Rollouts of each group that are private rehearsal attempts for the others (0: none). The
   * group's other rollouts start from the rehearsal memory of these attempts, built as test-time
   * `parallel:N` builds it, so the policy learns to act on a memory of its own. Every rollout
   * still trains, and none calls a real environment.
   */
  memory_attempts: z.number().int().min(0).default(0),
  /**
   * How the reflect role is prompted wherever the policy rehearses privately (rollouts from a
   * memory, evaluations with rehearsal): `default` instructions, or the built-in domain's
   * `compact` ones, for a policy trained on reflect rows (`sft.roles`).
   */
  reflect_prompt: z.enum(["default", "compact"]).default("default"),
  /** Rollouts generated at once. */
  concurrency: positiveInt.default(32),
  /** Where the tiny model samples rollouts: onnxruntime with a KV cache, or tfjs. */
  engine: z.enum(["onnx", "tfjs"]).default("onnx"),
  /**
   * Task groups of each training step whose rollouts are kept in `rollouts/train.jsonl` (the
   * step's first groups); every evaluation then keeps all its tasks in `rollouts/eval.jsonl`.
   * 0 keeps nothing.
   */
  keep: z.number().int().min(0).default(2),
  /** The cap on both kept-rollout files together, in MB; past it a run keeps no more (one log line says so). */
  keep_max_mb: z.number().gt(0).default(512),
});
export type RolloutConfig = z.infer<typeof RolloutConfig>;

export const AlgorithmConfig = z.strictObject({
  /** `row`: mean over rows of the role (reference); `trajectory`: mean over rollouts containing it. */
  baseline: BaselineMode.default("row"),
  /** Role-wise baselines (EnvACE); false gives plain GRPO with one baseline for all roles. */
  role_wise: z.boolean().default(true),
  norm_adv_by_std: z.boolean().default(false),
  /** Reward added to rows whose output could not be parsed. */
  invalid_output_penalty: z.number().max(0).default(-0.1),
});
export type AlgorithmConfig = z.infer<typeof AlgorithmConfig>;

export const ActorConfig = z.strictObject({
  lr: z.number().positive().default(1e-4),
  weight_decay: z.number().min(0).default(0),
  grad_clip: z.number().min(0).default(1),
  // The loss's defaults are `@envace/grpo`'s (the paper's), under verl's names.
  clip_ratio_low: z.number().min(0).lt(1).default(defaultPolicyLossConfig.epsLow),
  clip_ratio_high: z.number().min(0).default(defaultPolicyLossConfig.epsHigh),
  /** Dual-clip constant c; null turns dual clip off. */
  clip_ratio_c: z.number().gt(1).nullable().default(defaultPolicyLossConfig.dualClip),
  kl_coef: z.number().min(0).default(defaultPolicyLossConfig.klCoef),
  entropy_coeff: z.number().min(0).default(defaultPolicyLossConfig.entropyCoef),
  loss_agg_mode: LossAggregation.default(defaultPolicyLossConfig.aggregation),
  /**
   * Tasks per optimizer step: a step's rollouts are split into mini-batches of this many tasks'
   * groups, each its own clipped update (PPO-style); null takes the whole step at once.
   */
  ppo_mini_batch_size: positiveInt.nullable().default(null),
  /** Passes over a step's mini-batches; after the first, the clip bounds how far the policy moves off the sampler. */
  ppo_epochs: positiveInt.default(1),
});
export type ActorConfig = z.infer<typeof ActorConfig>;

export const JudgeConfig = z.strictObject({
  base_url: z.url(),
  model: z.string().min(1),
  api_key_env: z.string().optional(),
  concurrency: positiveInt.default(16),
  max_retries: z.number().int().min(0).default(4),
});

export const RewardConfig = z.strictObject({
  /**
   * `verifiable`: the domain's outcome check (replays the rollout's calls on the hidden world);
   * `checklist`: the CM2 checklist judge; `consistent` (built-in domain): the outcome check of the
   * world the rollout itself observed (`@envace/bench-builtin` `scoreConsistency`).
   */
  type: z.enum(["verifiable", "checklist", "consistent"]).default("consistent"),
  /**
   * The reward the Rehearse rows inherit instead of `type` (built-in domain, role-wise
   * baselines). With `type: consistent` the Rehearse role would be paid for imagining worlds the
   * agent finds easy; `verifiable` pays it for worlds that lead to the real outcome. So where
   * Rehearse rows train role-wise on a `consistent` reward, it defaults to `verifiable`
   * (`TrainConfig` fills it in, as it depends on other sections); elsewhere it is unset.
   */
  rehearse_type: z.enum(["verifiable", "checklist", "consistent"]).optional(),
  judge: JudgeConfig.optional(),
});
export type RewardConfig = z.infer<typeof RewardConfig>;

export const EvalConfig = z.strictObject({
  every_steps: z.number().int().min(0).default(24),
  temperature: z.number().min(0).default(0.6),
  top_p: z.number().gt(0).max(1).default(0.95),
  /** Rehearsal settings to evaluate, e.g. `[none, "parallel:2"]`. */
  rehearsal: z.array(RehearsalSettingText).min(1).default(["none", "parallel:2"]),
});
export type EvalConfig = z.infer<typeof EvalConfig>;

export const TrainerConfig = z.strictObject({
  /** RL steps after the warm start; 0 runs the warm start alone (a base checkpoint for later runs' `init_from`). */
  total_steps: z.number().int().min(0).default(24),
  /** Save a checkpoint every N steps (a killed run resumes from the last one). */
  save_every: positiveInt.default(8),
});

export const TrainConfig = z
  .strictObject({
    /** `envace`: self-unfolded rollouts; `grpo`: act-only policy; `per-role`: separate Act and Rehearse policies. */
    mode: z.enum(["envace", "grpo", "per-role"]).default("envace"),
    /** `grpo` only: where tool responses come from — a frozen `simulator` model or the `real` environment. */
    environment: z.enum(["self", "simulator", "real"]).default("self"),
    seed: z.number().int().min(0).default(1),
    /**
     * Start from this checkpoint folder of an earlier run (its `checkpoints/sft`, or a step's
     * `policy` folder), or `embedded:<name>`, a shipped base checkpoint, instead of a fresh model,
     * e.g. to compare modes from one warm start. SFT still runs on top of it if `sft.enabled`.
     * `null` starts a fresh model (the resolved config then has no `init_from`).
     */
    init_from: z
      .string()
      .min(1)
      .nullable()
      .default("embedded:base")
      .transform((from) => from ?? undefined),
    data: DataConfig.default(DataConfig.parse({})),
    model: ModelConfig.default(TinyModelConfig.parse({ type: "tiny" })),
    backend: BackendConfig.default({ type: "in-process" }),
    sft: SftConfig.default(SftConfig.parse({})),
    rollout: RolloutConfig.default(RolloutConfig.parse({})),
    algorithm: AlgorithmConfig.default(AlgorithmConfig.parse({})),
    actor: ActorConfig.default(ActorConfig.parse({})),
    reward: RewardConfig.default(RewardConfig.parse({})),
    eval: EvalConfig.default(EvalConfig.parse({})),
    trainer: TrainerConfig.default(TrainerConfig.parse({})),
    /** Trackers that also receive every step's and evaluation's scalars: `tensorboard` writes event files under `<run>/tensorboard/`. */
    tracking: z.array(z.enum(["tensorboard"])).default([]),
    grounding: GroundingConfig.optional(),
  })
  .superRefine((config, ctx) => {
    const selfModes = config.mode === "envace" || config.mode === "per-role";
    if (selfModes && config.environment !== "self") {
      ctx.addIssue({ code: "custom", path: ["environment"], message: `mode ${config.mode} rehearses with the policy itself: use environment: self` });
    }
    if (config.mode === "grpo" && config.environment === "self") {
      ctx.addIssue({ code: "custom", path: ["environment"], message: "mode grpo needs environment: simulator or real" });
    }
    if (config.data.source !== "builtin" && config.data.path === undefined) {
      ctx.addIssue({ code: "custom", path: ["data", "path"], message: `data source ${config.data.source} needs a path` });
    }
    if (config.data.source !== "builtin" && config.environment === "real") {
      ctx.addIssue({
        code: "custom",
        path: ["environment"],
        message: `environment: real: data source ${config.data.source} has no real environment (its records hold reference dialogues, not tools that run); use mode envace, or grpo with environment: simulator`,
      });
    }
    if (config.grounding !== undefined) groundingIssues(config, config.grounding).forEach((issue) => ctx.addIssue({ code: "custom", ...issue }));
    const sftRoles = supervisedRoles(config.sft);
    if (sftRoles.includes("reflect") && config.data.source !== "builtin") {
      ctx.addIssue({
        code: "custom",
        path: ["sft", "roles"],
        message: `reflect rows are judged by the built-in domain's outcome check; data source ${config.data.source} has none`,
      });
    }
    if (config.rollout.reflect_prompt === "compact" && config.data.source !== "builtin") {
      ctx.addIssue({
        code: "custom",
        path: ["rollout", "reflect_prompt"],
        message: `the compact reflect prompt is the built-in domain's; data source ${config.data.source} has none`,
      });
    }
    if (config.sft.declined_writes && config.data.source !== "builtin") {
      ctx.addIssue({
        code: "custom",
        path: ["sft", "declined_writes"],
        message: `sft.declined_writes needs the built-in domain's gold solver; data source ${config.data.source} has none`,
      });
    }
    if (config.sft.declined_writes && !sftRoles.includes("rehearse")) {
      ctx.addIssue({
        code: "custom",
        path: ["sft", "declined_writes"],
        message: "sft.declined_writes adds Rehearse rows; add rehearse to sft.roles (or sft.curriculum.roles)",
      });
    }
    if (config.init_from?.startsWith("embedded:") && config.model.type !== "tiny") {
      ctx.addIssue({
        code: "custom",
        path: ["init_from"],
        message: `${config.init_from} holds the built-in tiny model; with model type ${config.model.type} use init_from: null or a checkpoint of that model`,
      });
    }
    if (config.backend.type === "in-process" && config.model.type !== "tiny") {
      ctx.addIssue({
        code: "custom",
        path: ["backend"],
        message: "the in-process backend trains the built-in tiny model; use backend type tinker for a Hugging Face model",
      });
    }
    if (config.backend.type === "tinker" && config.model.type !== "hf") {
      ctx.addIssue({
        code: "custom",
        path: ["model"],
        message: "a Tinker backend needs model type hf (a local folder with the model's tokenizer and chat template)",
      });
    }
    if (config.rollout.memory_attempts > 0 && config.rollout.memory_attempts >= config.rollout.rollouts_per_task) {
      ctx.addIssue({
        code: "custom",
        path: ["rollout", "memory_attempts"],
        message: `rollout.memory_attempts (${config.rollout.memory_attempts}) must be below rollout.rollouts_per_task (${config.rollout.rollouts_per_task}): some rollouts of each group must start from the memory`,
      });
    }
    if (config.rollout.memory_attempts > 0 && config.environment === "real") {
      ctx.addIssue({
        code: "custom",
        path: ["rollout", "memory_attempts"],
        message:
          "rollout.memory_attempts builds a private rehearsal memory from imagined rollouts; with environment: real the attempts would be real calls: use environment self or simulator, or memory_attempts: 0",
      });
    }
    const miniBatch = config.actor.ppo_mini_batch_size;
    if (miniBatch !== null && config.rollout.tasks_per_step % miniBatch !== 0) {
      ctx.addIssue({
        code: "custom",
        path: ["actor", "ppo_mini_batch_size"],
        message: `actor.ppo_mini_batch_size ${miniBatch} must divide rollout.tasks_per_step ${config.rollout.tasks_per_step}, so every mini-batch holds whole groups`,
      });
    }
    if (config.rollout.top_p < 1) {
      ctx.addIssue({
        code: "custom",
        path: ["rollout", "top_p"],
        message:
          "training rollouts must sample the whole distribution (top_p 1): the learner cannot score a truncated nucleus, so every policy ratio would be biased; eval.top_p may be below 1",
      });
    }
    if (config.backend.type === "tinker" && config.rollout.temperature !== undefined && config.rollout.temperature !== 1) {
      ctx.addIssue({
        code: "custom",
        path: ["rollout", "temperature"],
        message:
          "a Tinker backend scores the model at temperature 1 only (the protocol carries no temperature), so rollout.temperature must be 1 with backend.type tinker",
      });
    }
    if (config.backend.type === "tinker" && config.backend.loss_strategy === "native") {
      // Tinker's importance_sampling and ppo losses have no dual clip, KL or entropy term.
      const terms = [
        config.actor.clip_ratio_c !== null ? "actor.clip_ratio_c (dual clip; null turns it off)" : null,
        config.actor.kl_coef > 0 ? "actor.kl_coef" : null,
        config.actor.entropy_coeff > 0 ? "actor.entropy_coeff" : null,
      ].filter((t) => t !== null);
      if (terms.length > 0) {
        ctx.addIssue({
          code: "custom",
          path: ["backend", "loss_strategy"],
          message: `native Tinker losses cannot express ${terms.join(", ")}: use backend.loss_strategy: surrogate, or turn ${terms.length > 1 ? "them" : "it"} off`,
        });
      }
    }
    if (config.reward.rehearse_type !== undefined && (config.data.source !== "builtin" || config.mode === "grpo" || !config.algorithm.role_wise)) {
      ctx.addIssue({
        code: "custom",
        path: ["reward", "rehearse_type"],
        message: "a separate Rehearse reward needs the built-in domain, a mode that trains the Rehearse role (envace, per-role) and algorithm.role_wise: true",
      });
    }
    if (config.reward.type !== "checklist" && config.data.source !== "builtin") {
      ctx.addIssue({
        code: "custom",
        path: ["reward", "type"],
        message: `reward type ${config.reward.type} needs the built-in domain's outcome check; data source ${config.data.source} has none: use reward.type: checklist with a reward.judge`,
      });
    }
    if (config.reward.type === "checklist" && config.reward.judge === undefined && config.data.source !== "builtin") {
      ctx.addIssue({ code: "custom", path: ["reward", "judge"], message: "a checklist reward needs a judge (base_url, model)" });
    }
  })
  .overwrite((config) => {
    // Defaults that depend on other sections are filled in last (see RolloutConfig, RewardConfig).
    const temperature = config.rollout.temperature ?? (config.backend.type === "tinker" ? 1 : 0.6);
    const withTemperature = { ...config, rollout: { ...config.rollout, temperature } };
    const rehearseTrainsRoleWise = config.mode !== "grpo" && config.algorithm.role_wise;
    if (config.reward.rehearse_type !== undefined || config.reward.type !== "consistent" || !rehearseTrainsRoleWise) return withTemperature;
    return { ...withTemperature, reward: { ...config.reward, rehearse_type: "verifiable" as const } };
  });
type ParsedTrainConfig = z.infer<typeof TrainConfig>;
/** A validated config, with every default filled in (the rollout temperature included). */
export type TrainConfig = ParsedTrainConfig & { rollout: { temperature: number } };
export type TrainConfigInput = z.input<typeof TrainConfig>;
