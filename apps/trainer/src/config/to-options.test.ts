import { computeAdvantages } from "@envace/grpo";
import type { TrainingRow } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./load.js";
import {
  adamOptions,
  advantageOptions,
  evalSampling,
  groundingLimits,
  miniBatching,
  policyLossOptions,
  rolloutLimits,
  rolloutSampling,
  scoringOptions,
  sftStageOptions,
  tinkerConnectOptions,
  tinkerModelOptions,
} from "./to-options.js";

// Every value differs from its default, so a key mapped from the wrong place shows.
const config = parseConfig(
  `
rollout: { tasks_per_step: 6, rollouts_per_task: 3, temperature: 0.7, max_turns: 5, max_response_tokens: 40, max_prompt_tokens: 900 }
algorithm: { baseline: trajectory, role_wise: false, norm_adv_by_std: true, invalid_output_penalty: -0.25 }
actor: { lr: 0.002, weight_decay: 0.01, grad_clip: 0.5, clip_ratio_low: 0.15, clip_ratio_high: 0.3, clip_ratio_c: null, kl_coef: 0.05, entropy_coeff: 0.002, loss_agg_mode: token-mean, ppo_mini_batch_size: 2, ppo_epochs: 3 }
sft: { enabled: true, epochs: 2, batch_size: 4, lr: 0.01, warmup_ratio: 0.25, curriculum: { roles: [act], epochs: 1, lr: 0.02, lr_schedule: constant } }
eval: { temperature: 0.3, top_p: 0.9 }
grounding: { fraction: 0.5, max_calls: { per_step: 7, per_run: null } }
`,
  "c.yaml",
);

describe("the config's sections as the libraries' options", () => {
  it("advantages: the config's penalty reward of -0.25 is grpo's penalty amount 0.25", () => {
    expect(advantageOptions(config.algorithm, config.rollout)).toEqual({
      baseline: "trajectory",
      roleWise: false,
      normalizeStd: true,
      invalidPenalty: 0.25,
      groupSize: 3,
    });
  });

  it("advantages: an invalid row scores its reward less 0.25, as the config's -0.25 says", () => {
    const row = (rollout: number, invalid: boolean): TrainingRow => ({
      taskId: "t",
      trajectoryId: `t/${rollout}`,
      rollout,
      index: 0,
      role: "act",
      promptTokens: [1],
      outputTokens: [2],
      logprobs: [-1],
      invalid,
    });
    const verdicts = new Map([
      ["t/0", { status: "scored" as const, value: 1 }],
      ["t/1", { status: "scored" as const, value: 1 }],
    ]);
    const batch = computeAdvantages([row(0, false), row(1, true)], verdicts, advantageOptions(config.algorithm, config.rollout));
    expect(batch.rows.map((r) => r.score)).toEqual([1, 0.75]);
  });

  it("policy loss and AdamW, under the libraries' names", () => {
    expect(policyLossOptions(config.actor)).toEqual({
      epsLow: 0.15,
      epsHigh: 0.3,
      dualClip: null,
      klCoef: 0.05,
      entropyCoef: 0.002,
      aggregation: "token-mean",
    });
    expect(adamOptions(config.actor, config.actor.lr)).toEqual({
      learningRate: 0.002,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.01,
      gradClipNorm: 0.5,
    });
    expect(miniBatching(config.actor)).toEqual({ size: 2, epochs: 3 });
  });

  it("rollouts, scoring and evaluation sampling", () => {
    expect(rolloutLimits(config.rollout)).toEqual({ maxTurns: 5, maxResponseTokens: 40, maxPromptTokens: 900 });
    expect(rolloutSampling(config.rollout)).toEqual({ temperature: 0.7, topP: 1 });
    expect(scoringOptions(config.rollout)).toEqual({ temperature: 0.7 });
    expect(evalSampling(config.eval)).toEqual({ temperature: 0.3, topP: 0.9 });
  });

  it("supervised stages: a constant stage keeps its lr; a cosine one warms up over 25%, then decays to 10%", () => {
    const { sft } = config;
    const curriculum = sftStageOptions(sft.curriculum!, sft, config.actor);
    expect(curriculum).toEqual({
      epochs: 1,
      batchSize: 4,
      adam: { learningRate: 0.02, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 0.5 },
    });
    const last = sftStageOptions(sft, sft, config.actor);
    expect(last.adam.learningRate).toBe(0.01);
    expect([last.epochs, last.batchSize]).toEqual([2, 4]);
    // 8 batches: warm-up floor(8 · 0.25) = 2 batches (0.005, 0.01), then cos decay over batches 2..7 from 0.01 to 0.001.
    const lrs = [0, 1, 2, 7].map((batch) => last.schedule!(batch, 8));
    expect(lrs[0]).toBeCloseTo(0.005, 15);
    expect(lrs[1]).toBeCloseTo(0.01, 15);
    expect(lrs[2]).toBeCloseTo(0.01, 15);
    expect(lrs[3]).toBeCloseTo(0.001, 15);
  });

  it("grounding's caps", () => {
    expect(groundingLimits(config.grounding!)).toEqual({ perStep: 7, perRun: null });
  });

  it("tinker: the connection (the key read from the named variable) and the model", () => {
    const tinker = parseConfig(
      "init_from: null\nactor: { clip_ratio_c: null }\nmodel: { type: hf, path: m }\nbackend: { type: tinker, base_url: 'http://127.0.0.1:9/', base_model: Qwen/Qwen3-8B, api_key_env: MY_KEY, retry_deadline_s: 12, lora_rank: 8, loss_strategy: native }\n",
      "c.yaml",
    );
    if (tinker.backend.type !== "tinker") throw new Error("a tinker backend was parsed");
    expect(tinkerConnectOptions(tinker.backend, { MY_KEY: "tml-1", TINKER_API_KEY: "other" })).toEqual({
      baseUrl: "http://127.0.0.1:9/",
      retry: { submitDeadlineMs: 12_000 },
      apiKey: "tml-1",
    });
    expect(tinkerConnectOptions(tinker.backend, { TINKER_API_KEY: "other" })).toEqual({ baseUrl: "http://127.0.0.1:9/", retry: { submitDeadlineMs: 12_000 } });
    expect(tinkerModelOptions(tinker.backend, 5)).toEqual({ baseModel: "Qwen/Qwen3-8B", loraRank: 8, seed: 5, lossStrategy: "native" });
  });
});
