import { CheckpointError } from "./errors.js";
import { readFile } from "node:fs/promises";
import { parseRecord } from "@envace/protocol";
import { z } from "zod";

/**
 * The `config.json` keys of a Hugging Face `LlamaForCausalLM`: the general Llama block, with
 * grouped key/value heads and a tied or separate output head (what the ONNX exporter of
 * `@envace/models` reads; the tiny model's `HfLlamaConfig` is a restriction of it). Only the
 * plain block is supported (no biases, SiLU, unscaled RoPE); anything else is refused by name
 * rather than computed wrongly.
 */
export const LlamaConfig = z
  .looseObject({
    architectures: z.array(z.string()).optional(),
    model_type: z.string().optional(),
    vocab_size: z.number().int().positive(),
    hidden_size: z.number().int().positive(),
    intermediate_size: z.number().int().positive(),
    num_hidden_layers: z.number().int().positive(),
    num_attention_heads: z.number().int().positive(),
    num_key_value_heads: z.number().int().positive().optional(),
    head_dim: z.number().int().positive().optional(),
    rms_norm_eps: z.number().positive().default(1e-6),
    rope_theta: z.number().positive().default(10_000),
    tie_word_embeddings: z.boolean().default(false),
    max_position_embeddings: z.number().int().positive().optional(),
    hidden_act: z.literal("silu", { error: 'only "silu" is supported' }).default("silu"),
    attention_bias: z.literal(false, { error: "attention biases are not supported" }).optional(),
    mlp_bias: z.literal(false, { error: "MLP biases are not supported" }).optional(),
    rope_scaling: z.null({ error: "RoPE scaling is not supported" }).optional(),
    bos_token_id: z.number().int().nullish(),
    eos_token_id: z.union([z.number().int(), z.array(z.number().int())]).nullish(),
  })
  .refine((c) => c.head_dim !== undefined || c.hidden_size % c.num_attention_heads === 0, {
    error: "hidden_size must be a multiple of num_attention_heads when head_dim is not given",
    path: ["hidden_size"],
  })
  .refine((c) => c.num_attention_heads % (c.num_key_value_heads ?? c.num_attention_heads) === 0, {
    error: "num_attention_heads must be a multiple of num_key_value_heads",
    path: ["num_key_value_heads"],
  });
export type LlamaConfig = z.infer<typeof LlamaConfig>;

/** The derived sizes every consumer needs. */
export interface LlamaShape {
  vocab: number;
  hidden: number;
  intermediate: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  eps: number;
  ropeTheta: number;
  tied: boolean;
}

export function llamaShape(config: LlamaConfig): LlamaShape {
  return {
    vocab: config.vocab_size,
    hidden: config.hidden_size,
    intermediate: config.intermediate_size,
    layers: config.num_hidden_layers,
    heads: config.num_attention_heads,
    kvHeads: config.num_key_value_heads ?? config.num_attention_heads,
    headDim: config.head_dim ?? config.hidden_size / config.num_attention_heads,
    eps: config.rms_norm_eps,
    ropeTheta: config.rope_theta,
    tied: config.tie_word_embeddings,
  };
}

/** Read and validate `config.json`; errors name the file and the key. */
export async function readLlamaConfig(path: string): Promise<LlamaConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CheckpointError(`missing ${path}`, { cause: error });
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${path}: not JSON (${(error as Error).message})`, { cause: error });
  }
  return parseRecord(LlamaConfig, value, { file: path });
}

/** Hugging Face tensor names of the Llama block, in `[out, in]` layout. */
export const llamaTensorNames = {
  embed: "model.embed_tokens.weight",
  norm: "model.norm.weight",
  lmHead: "lm_head.weight",
  inputNorm: (i: number) => `model.layers.${i}.input_layernorm.weight`,
  postNorm: (i: number) => `model.layers.${i}.post_attention_layernorm.weight`,
  q: (i: number) => `model.layers.${i}.self_attn.q_proj.weight`,
  k: (i: number) => `model.layers.${i}.self_attn.k_proj.weight`,
  v: (i: number) => `model.layers.${i}.self_attn.v_proj.weight`,
  o: (i: number) => `model.layers.${i}.self_attn.o_proj.weight`,
  gate: (i: number) => `model.layers.${i}.mlp.gate_proj.weight`,
  up: (i: number) => `model.layers.${i}.mlp.up_proj.weight`,
  down: (i: number) => `model.layers.${i}.mlp.down_proj.weight`,
} as const;

/** Every tensor a checkpoint of this shape must hold, with its expected shape. */
export function expectedLlamaTensors(shape: LlamaShape): Map<string, number[]> {
  const { vocab, hidden, intermediate, heads, kvHeads, headDim } = shape;
  const names = llamaTensorNames;
  const expected = new Map<string, number[]>([
    [names.embed, [vocab, hidden]],
    [names.norm, [hidden]],
  ]);
  if (!shape.tied) expected.set(names.lmHead, [vocab, hidden]);
  for (let i = 0; i < shape.layers; i++) {
    expected.set(names.inputNorm(i), [hidden]);
    expected.set(names.postNorm(i), [hidden]);
    expected.set(names.q(i), [heads * headDim, hidden]);
    expected.set(names.k(i), [kvHeads * headDim, hidden]);
    expected.set(names.v(i), [kvHeads * headDim, hidden]);
    expected.set(names.o(i), [hidden, heads * headDim]);
    expected.set(names.gate(i), [intermediate, hidden]);
    expected.set(names.up(i), [intermediate, hidden]);
    expected.set(names.down(i), [hidden, intermediate]);
  }
  return expected;
}

/** Check names and shapes against the config; the error lists every problem. */
export function checkLlamaTensors(shape: LlamaShape, tensors: ReadonlyMap<string, { shape: number[] }>, file: string): void {
  const problems: string[] = [];
  for (const [name, dims] of expectedLlamaTensors(shape)) {
    const tensor = tensors.get(name);
    if (!tensor) problems.push(`missing ${name}`);
    else if (tensor.shape.join(",") !== dims.join(","))
      problems.push(`${name} has shape [${tensor.shape.join(", ")}], config.json implies [${dims.join(", ")}]`);
  }
  if (problems.length > 0) throw new CheckpointError(`${file}: ${problems.join("; ")}`);
}
