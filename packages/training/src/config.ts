import { parseRecord, RecordError, type RecordSource } from "@envace/protocol";
import { z } from "zod";
import { LlamaConfig } from "./llama-config.js";

/**
 * The tiny decoder-only transformer, in the Llama/Qwen layout: token embedding, pre-norm blocks
 * of RMSNorm → causal multi-head attention with rotary embeddings → RMSNorm → SwiGLU MLP, a final
 * RMSNorm, and logits from the tied embedding. No biases; as many key/value heads as query heads.
 */
export const TinyModelConfig = z
  .object({
    vocabSize: z.number().int().positive(),
    hiddenSize: z.number().int().positive(),
    intermediateSize: z.number().int().positive(),
    numLayers: z.number().int().positive(),
    numHeads: z.number().int().positive(),
    rmsNormEps: z.number().positive().default(1e-6),
    ropeTheta: z.number().positive().default(10000),
    maxPositionEmbeddings: z.number().int().positive().default(2048),
    bosTokenId: z.number().int().nonnegative().nullable().default(null),
    eosTokenId: z.number().int().nonnegative().nullable().default(null),
    /** Standard deviation of the normal initialisation (Hugging Face `initializer_range`). */
    initializerRange: z.number().positive().default(0.02),
  })
  .superRefine((c, ctx) => {
    if (c.hiddenSize % c.numHeads !== 0) {
      ctx.addIssue({ code: "custom", path: ["hiddenSize"], message: `must be a multiple of numHeads (${c.numHeads})` });
    } else if ((c.hiddenSize / c.numHeads) % 2 !== 0) {
      ctx.addIssue({ code: "custom", path: ["numHeads"], message: "the head size hiddenSize/numHeads must be even for rotary embeddings" });
    }
    for (const key of ["bosTokenId", "eosTokenId"] as const) {
      const id = c[key];
      if (id !== null && id >= c.vocabSize) ctx.addIssue({ code: "custom", path: [key], message: `must be below vocabSize (${c.vocabSize})` });
    }
  });
export type TinyModelConfig = z.infer<typeof TinyModelConfig>;
export type TinyModelConfigInput = z.input<typeof TinyModelConfig>;

/** The size of one attention head. */
export function headDim(config: TinyModelConfig): number {
  return config.hiddenSize / config.numHeads;
}

/**
 * `config.json` as the tiny model writes and reads it: the general `LlamaConfig` restricted to
 * what the tiny model supports (tied embeddings, single bos/eos ids; one key/value head per query
 * head is checked by `fromHfConfig`), with the keys Hugging Face always writes required, plus the
 * two that only training uses.
 */
export const HfLlamaConfig = LlamaConfig.safeExtend({
  architectures: z.array(z.literal("LlamaForCausalLM")).length(1).default(["LlamaForCausalLM"]),
  model_type: z.literal("llama"),
  rms_norm_eps: z.number().positive(),
  rope_theta: z.number().positive(),
  max_position_embeddings: z.number().int().positive(),
  tie_word_embeddings: z.literal(true, { error: "the tiny model ties its input and output embeddings; only true is supported" }),
  bos_token_id: z.number().int().nonnegative().nullable().optional(),
  eos_token_id: z.number().int().nonnegative().nullable().optional(),
  initializer_range: z.number().positive().optional(),
  torch_dtype: z.string().optional(),
});
export type HfLlamaConfig = z.infer<typeof HfLlamaConfig>;

/** The `config.json` a checkpoint folder holds for `config`. */
export function toHfConfig(config: TinyModelConfig): HfLlamaConfig {
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numHeads,
    head_dim: headDim(config),
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: null,
    max_position_embeddings: config.maxPositionEmbeddings,
    tie_word_embeddings: true,
    hidden_act: "silu",
    attention_bias: false,
    mlp_bias: false,
    bos_token_id: config.bosTokenId,
    eos_token_id: config.eosTokenId,
    initializer_range: config.initializerRange,
    torch_dtype: "float32",
  };
}

/** Read a Hugging Face `config.json` value; errors name `source` and the offending field. */
export function fromHfConfig(value: unknown, source: RecordSource): TinyModelConfig {
  const hf = parseRecord(HfLlamaConfig, value, source);
  const fail = (path: string, message: string): never => {
    throw new RecordError(source, [{ path, message }]);
  };
  if (hf.num_key_value_heads !== undefined && hf.num_key_value_heads !== hf.num_attention_heads) {
    fail("num_key_value_heads", `must equal num_attention_heads (${hf.num_attention_heads}); grouped-query attention is not supported`);
  }
  if (hf.head_dim !== undefined && hf.head_dim * hf.num_attention_heads !== hf.hidden_size) {
    fail("head_dim", `must equal hidden_size / num_attention_heads (${hf.hidden_size / hf.num_attention_heads})`);
  }
  return parseRecord(
    TinyModelConfig,
    {
      vocabSize: hf.vocab_size,
      hiddenSize: hf.hidden_size,
      intermediateSize: hf.intermediate_size,
      numLayers: hf.num_hidden_layers,
      numHeads: hf.num_attention_heads,
      rmsNormEps: hf.rms_norm_eps,
      ropeTheta: hf.rope_theta,
      maxPositionEmbeddings: hf.max_position_embeddings,
      bosTokenId: hf.bos_token_id ?? null,
      eosTokenId: hf.eos_token_id ?? null,
      initializerRange: hf.initializer_range,
    },
    source,
  );
}
