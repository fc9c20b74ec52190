import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HfLlamaConfig, TinyModelConfig, toHfConfig } from "./config.js";
import { expectedLlamaTensors, LlamaConfig, llamaShape, readLlamaConfig } from "./llama-config.js";
import { parameterSpecs } from "./parameters.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "envace-llama-config-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A small Llama with grouped key/value heads and a separate output head. */
const grouped: LlamaConfig = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  vocab_size: 259,
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 10_000,
  tie_word_embeddings: false,
  max_position_embeddings: 512,
  hidden_act: "silu",
  bos_token_id: null,
  eos_token_id: 258,
};

describe("LlamaConfig", () => {
  it("refuses what the exporter does not implement, naming file and key", async () => {
    const path = join(root, "biased-config.json");
    await writeFile(path, JSON.stringify({ ...grouped, attention_bias: true, rope_scaling: { type: "linear", factor: 2 } }));
    const error = await readLlamaConfig(path).catch((e: unknown) => e as Error);
    expect(error.message).toContain(path);
    expect(error.message).toContain("attention_bias: attention biases are not supported");
    expect(error.message).toContain("rope_scaling: RoPE scaling is not supported");
  });

  it("requires heads to divide evenly", () => {
    const result = LlamaConfig.safeParse({ ...grouped, num_key_value_heads: 3 });
    expect(result.success).toBe(false);
  });

  it("derives grouped key/value projections and a separate output head", () => {
    const expected = expectedLlamaTensors(llamaShape(LlamaConfig.parse(grouped)));
    expect(expected.get("model.layers.1.self_attn.k_proj.weight")).toEqual([16, 32]);
    expect(expected.get("model.layers.1.self_attn.q_proj.weight")).toEqual([32, 32]);
    expect(expected.get("lm_head.weight")).toEqual([259, 32]);
  });
});

describe("the tiny model's HfLlamaConfig", () => {
  const tiny = TinyModelConfig.parse({ vocabSize: 64, hiddenSize: 32, intermediateSize: 48, numLayers: 3, numHeads: 4 });

  it("is a Llama config whose tensors are exactly the tiny model's parameters", () => {
    const hf = LlamaConfig.parse(toHfConfig(tiny));
    const fromLlama = [...expectedLlamaTensors(llamaShape(hf))].sort(([a], [b]) => a.localeCompare(b));
    const fromTiny = parameterSpecs(tiny)
      .map((spec): [string, number[]] => [spec.name, spec.shape])
      .sort(([a], [b]) => a.localeCompare(b));
    expect(fromLlama).toEqual(fromTiny);
  });

  it("is the general schema restricted: a grouped or untied Llama is refused", () => {
    expect(LlamaConfig.safeParse(grouped).success).toBe(true);
    const issues = HfLlamaConfig.safeParse(grouped).error?.issues.map((issue) => issue.path.join("."));
    expect(issues).toEqual(["tie_word_embeddings"]);
  });
});
