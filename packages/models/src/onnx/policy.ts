import { join } from "node:path";
import { loadHuggingFaceTokenizer, type HuggingFaceTokenizer } from "@envace/trajectory";
import { OnnxCausalLM, readOptionalJson, type OnnxSessionOptions } from "./causal-lm.js";
import { OnnxSampler } from "./sampler.js";
import { StreamingSamplerPolicy } from "./streaming-policy.js";
import { OnnxModelError } from "./errors.js";

export interface LoadOnnxOptions extends OnnxSessionOptions {
  /** The model file inside the folder. Default: the first of `model.onnx`, `onnx/model.onnx`, … that exists. */
  file?: string;
  /** Policy id for logs. Default `onnx:<folder name>`. */
  id?: string;
  /** Chat-template variables for every prompt, e.g. `{ enable_thinking: false }`. */
  templateVariables?: Readonly<Record<string, unknown>>;
  /** See `OnnxSamplerOptions.prefixCacheBytes`. */
  prefixCacheBytes?: number;
}

/** A local ONNX model with everything built on it. */
export interface OnnxModel {
  dir: string;
  model: OnnxCausalLM;
  tokenizer: HuggingFaceTokenizer;
  sampler: OnnxSampler;
  /** Streams its text as it samples (`generateStream`). */
  policy: StreamingSamplerPolicy;
}

interface ConfigHints {
  num_key_value_heads?: unknown;
  num_attention_heads?: unknown;
  hidden_size?: unknown;
  head_dim?: unknown;
  max_position_embeddings?: unknown;
  eos_token_id?: unknown;
}

const int = (value: unknown): number | undefined => (typeof value === "number" && Number.isInteger(value) ? value : undefined);

/**
 * Load a Hugging Face ONNX export — the model, its tokenizer and its chat template, all from one
 * folder — as a `Sampler` with a KV cache and a `Policy`. Nothing is downloaded: a missing folder
 * or file is an error naming the path.
 */
export async function loadOnnxModel(dir: string, options: LoadOnnxOptions = {}): Promise<OnnxModel> {
  const tokenizer = await loadHuggingFaceTokenizer(dir);
  if (!tokenizer.chatTemplate) {
    throw new OnnxModelError(`${join(dir, "tokenizer_config.json")} has no chat_template (and there is no ${join(dir, "chat_template.jinja")})`);
  }
  const config = ((await readOptionalJson(join(dir, "config.json"))) ?? {}) as ConfigHints;
  const heads = int(config.num_attention_heads);
  const hidden = int(config.hidden_size);
  const headDim = int(config.head_dim) ?? (heads && hidden ? hidden / heads : undefined);
  const kvHeads = int(config.num_key_value_heads) ?? heads;
  const model = await OnnxCausalLM.load(dir, { ...options, fallbackDims: { ...(kvHeads ? { kvHeads } : {}), ...(headDim ? { headDim } : {}) } });
  const eos = Array.isArray(config.eos_token_id) ? config.eos_token_id.map(int) : [int(config.eos_token_id)];
  const stopTokenIds = [...new Set([...tokenizer.stopTokenIds, ...eos.filter((id): id is number => id !== undefined)])];
  const maxContext = int(config.max_position_embeddings);
  const sampler = new OnnxSampler(model, {
    stopTokenIds,
    tokenizer,
    ...(maxContext ? { maxContext } : {}),
    ...(options.prefixCacheBytes !== undefined ? { prefixCacheBytes: options.prefixCacheBytes } : {}),
  });
  // eslint-disable-next-line regexp/no-super-linear-move -- a folder the person named, short and trusted
  const trimmed = dir.replace(/[/\\]+$/, "");
  const folderName = trimmed.split(/[/\\]/).at(-1) ?? dir;
  const policy = new StreamingSamplerPolicy({
    id: options.id ?? `onnx:${folderName}`,
    sampler,
    tokenizer,
    template: tokenizer.chatTemplate,
    ...(options.templateVariables ? { templateVariables: options.templateVariables } : {}),
  });
  return { dir, model, tokenizer, sampler, policy };
}
