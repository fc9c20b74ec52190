import { join } from "node:path";
import type { Sampler } from "@envace/protocol";
import { loadCheckpoint, TinySampler } from "@envace/training";
import { loadHuggingFaceTokenizer, SamplerPolicy, type HuggingFaceTokenizer } from "@envace/trajectory";
import { TinyOnnxEngine } from "./onnx-sync.js";

export interface LoadTinyOptions {
  /** `tfjs` (default): the training package's own sampler. `onnx`: the same weights on onnxruntime with a KV cache. */
  engine?: "tfjs" | "onnx";
  /** onnxruntime threads (onnx engine). */
  threads?: number;
  templateVariables?: Readonly<Record<string, unknown>>;
}

export interface TinyModel {
  dir: string;
  engine: "tfjs" | "onnx";
  sampler: Sampler;
  tokenizer: HuggingFaceTokenizer;
  policy: SamplerPolicy;
}

/**
 * The built-in tiny model from a checkpoint folder of the training package (`config.json`,
 * `model.safetensors`, `tokenizer.json`, `tokenizer_config.json` with a chat template), behind
 * the same `Sampler` and `Policy` interfaces as every other model.
 */
export async function loadTinyModel(dir: string, options: LoadTinyOptions = {}): Promise<TinyModel> {
  const engine = options.engine ?? "tfjs";
  const tokenizer = await loadHuggingFaceTokenizer(dir);
  if (!tokenizer.chatTemplate) {
    throw new Error(`${join(dir, "tokenizer_config.json")} has no chat_template: the tiny model's policy renders prompts with it`);
  }
  const { config, params } = await loadCheckpoint(dir, { optimizer: false });
  const stopTokenIds = [...new Set([...tokenizer.stopTokenIds, ...(config.eosTokenId !== null ? [config.eosTokenId] : [])])];
  const sampler: Sampler =
    engine === "tfjs"
      ? new TinySampler(config, params, { tokenizer, stopTokenIds, name: `tiny:${dir}` })
      : (await TinyOnnxEngine.create(config, params, { stopTokenIds, tokenizer, ...(options.threads ? { threads: options.threads } : {}) })).sampler;
  const policy = new SamplerPolicy({
    id: `tiny:${dir}`,
    sampler,
    tokenizer,
    template: tokenizer.chatTemplate,
    ...(options.templateVariables ? { templateVariables: options.templateVariables } : {}),
  });
  return { dir, engine, sampler, tokenizer, policy };
}
