import { join } from "node:path";
import type { Sampler } from "@envace/protocol";
import { loadCheckpoint, TinySampler } from "@envace/training";
import { ChatTemplate, loadHuggingFaceTokenizer, type HuggingFaceTokenizer } from "@envace/trajectory";
import { StreamingSamplerPolicy, type TokenStreamingSampler } from "../onnx/streaming-policy.js";
import { TINY_CHAT_TEMPLATE } from "./chat-template.js";
import { TinyOnnxEngine } from "./onnx-sync.js";
import { OnnxModelError } from "../onnx/errors.js";

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
  /** Streams its text as it samples (`generateStream`). */
  policy: StreamingSamplerPolicy;
}

/**
 * The built-in tiny model from a checkpoint folder of the training package (`config.json`,
 * `model.safetensors`, `tokenizer.json`, `tokenizer_config.json`), behind the same `Sampler` and
 * `Policy` interfaces as every other model. Prompts use the folder's chat template, or
 * `TINY_CHAT_TEMPLATE` when it has none.
 */
export async function loadTinyModel(dir: string, options: LoadTinyOptions = {}): Promise<TinyModel> {
  const engine = options.engine ?? "tfjs";
  const tokenizer = await loadHuggingFaceTokenizer(dir);
  const template = tokenizer.chatTemplate ?? tinyTemplateFor(tokenizer, dir);
  const { config, params } = await loadCheckpoint(dir, { optimizer: false });
  const stopTokenIds = [...new Set([...tokenizer.stopTokenIds, ...(config.eosTokenId !== null ? [config.eosTokenId] : [])])];
  const sampler: TokenStreamingSampler =
    engine === "tfjs"
      ? new TinySampler(config, params, { tokenizer, stopTokenIds, name: `tiny:${dir}` })
      : (await TinyOnnxEngine.create(config, params, { stopTokenIds, tokenizer, ...(options.threads ? { threads: options.threads } : {}) })).sampler;
  const policy = new StreamingSamplerPolicy({
    id: `tiny:${dir}`,
    sampler,
    tokenizer,
    template,
    ...(options.templateVariables ? { templateVariables: options.templateVariables } : {}),
  });
  return { dir, engine, sampler, tokenizer, policy };
}

/** The built-in template, provided the tokenizer has the ChatML special tokens it writes. */
function tinyTemplateFor(tokenizer: HuggingFaceTokenizer, dir: string): ChatTemplate {
  const missing = ["<|im_start|>", "<|im_end|>"].filter((token) => tokenizer.tokenToId(token) === undefined);
  if (missing.length > 0) {
    throw new OnnxModelError(
      `${join(dir, "tokenizer_config.json")} has no chat_template, and the tokenizer lacks ${missing.join(" and ")} for the built-in one; add a chat_template`,
    );
  }
  return new ChatTemplate(TINY_CHAT_TEMPLATE);
}
