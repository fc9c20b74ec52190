import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectedLlamaTensors, llamaShape, seededRandom, writeSafetensors, type LlamaConfig, type NamedTensor } from "@envace/training";

/**
 * Small checkpoints with random weights in the Hugging Face layout, for tests and benchmarks:
 * `config.json`, `model.safetensors`, and a byte-level `tokenizer.json` with ChatML specials.
 */

export const SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;

/** The byte ↔ printable-character map of byte-level BPE: printable bytes stand for themselves. */
function byteCharacters(): string[] {
  const printable = (b: number): boolean => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const chars: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) chars.push(String.fromCodePoint(printable(b) ? b : next++));
  return chars;
}

const CHATML =
  "{%- for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}";

/** `tokenizer.json` and `tokenizer_config.json` of a byte-level tokenizer: ids 0–255 are bytes, then the specials. */
export function byteTokenizerFiles(): { tokenizer: object; config: object } {
  const vocab = Object.fromEntries(byteCharacters().map((char, id) => [char, id]));
  const added = SPECIAL_TOKENS.map((content, i) => ({
    id: 256 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false };
  return {
    tokenizer: {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: byteLevel,
      post_processor: null,
      decoder: byteLevel,
      model: {
        type: "BPE",
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        vocab,
        merges: [],
      },
    },
    config: {
      eos_token: "<|im_end|>",
      pad_token: "<|endoftext|>",
      bos_token: null,
      chat_template: CHATML,
      added_tokens_decoder: Object.fromEntries(added.map(({ id, ...token }) => [String(id), token])),
    },
  };
}

export interface TinyLlamaOptions {
  hidden?: number;
  layers?: number;
  heads?: number;
  kvHeads?: number;
  intermediate?: number;
  tied?: boolean;
  seed?: number;
}

/** A config and random weights (scaled like an initialised model) for a vocabulary of 259 byte-level tokens. */
export function randomLlama(options: TinyLlamaOptions = {}): { config: LlamaConfig; weights: Map<string, NamedTensor> } {
  const hidden = options.hidden ?? 32;
  const heads = options.heads ?? 4;
  const config: LlamaConfig = {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: 256 + SPECIAL_TOKENS.length,
    hidden_size: hidden,
    intermediate_size: options.intermediate ?? hidden * 2,
    num_hidden_layers: options.layers ?? 2,
    num_attention_heads: heads,
    num_key_value_heads: options.kvHeads ?? heads,
    rms_norm_eps: 1e-6,
    rope_theta: 10_000,
    tie_word_embeddings: options.tied ?? true,
    max_position_embeddings: 512,
    hidden_act: "silu",
    bos_token_id: null,
    eos_token_id: 258,
  };
  const random = seededRandom(options.seed ?? 1);
  const weights = new Map<string, NamedTensor>();
  for (const [name, shape] of expectedLlamaTensors(llamaShape(config))) {
    const count = shape.reduce((a, b) => a * b, 1);
    // Norm weights around 1, matrices around 0 with a scale that keeps activations of order 1.
    const isNorm = shape.length === 1;
    const spread = isNorm ? 0.2 : 1 / Math.sqrt(shape[1]!);
    const data = Float32Array.from({ length: count }, () => (isNorm ? 1 : 0) + (random() * 2 - 1) * spread * (isNorm ? 1 : Math.sqrt(3)));
    weights.set(name, { shape, data });
  }
  return { config, weights };
}

/** Write a checkpoint folder in the Hugging Face layout. */
export async function writeLlamaCheckpoint(dir: string, config: LlamaConfig, weights: ReadonlyMap<string, NamedTensor>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const { tokenizer, config: tokenizerConfig } = byteTokenizerFiles();
  await Promise.all([
    writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2)),
    writeSafetensors(join(dir, "model.safetensors"), weights, { format: "pt" }),
    writeFile(join(dir, "tokenizer.json"), JSON.stringify(tokenizer)),
    writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig, null, 2)),
  ]);
}
