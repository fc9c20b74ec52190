import { ConfigError } from "@envace/config";
import type { TrainConfig } from "../config/schema.js";
import type { Domain } from "./domain.js";
import { TinkerPolicyModel } from "./tinker-model.js";
import { TinyPolicyModel } from "./tiny-model.js";
import type { TrainedModel } from "./trained-model.js";

/** A fresh model for `config`: the tiny one (its tokenizer trained on the domain) or one on a Tinker server. */
export async function createModel(config: TrainConfig, domain: Domain): Promise<TrainedModel> {
  const { model, backend } = config;
  if (model.type === "tiny" && backend.type === "in-process") {
    return TinyPolicyModel.create(model, domain.corpus(), { seed: config.seed, rolloutEngine: config.rollout.engine, listTools: !domain.toolsInSystemPrompt });
  }
  if (model.type === "hf" && backend.type === "tinker") return TinkerPolicyModel.open(backend, model, { seed: config.seed });
  throw new ConfigError(`model type ${model.type} cannot be trained by backend type ${backend.type}`);
}

/**
 * Refusals that need the model's files or its server but create nothing that lasts (a Tinker
 * server's loss reduction, measured on a scratch model): run before the run directory is written.
 */
export async function preflightModel(config: TrainConfig): Promise<void> {
  const { model, backend } = config;
  if (model.type === "hf" && backend.type === "tinker") await TinkerPolicyModel.preflight(backend, model);
}

/** The model saved in checkpoint folder `dir` by `TrainedModel.save`. */
export async function loadModel(config: TrainConfig, dir: string): Promise<TrainedModel> {
  const { model, backend } = config;
  if (model.type === "tiny" && backend.type === "in-process") return TinyPolicyModel.load(dir, config.rollout.engine, config.seed);
  if (model.type === "hf" && backend.type === "tinker") return TinkerPolicyModel.open(backend, model, { seed: config.seed, checkpoint: dir });
  throw new ConfigError(`model type ${model.type} cannot be trained by backend type ${backend.type}`);
}
