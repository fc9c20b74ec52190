import { mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SamplingParams } from "@envace/protocol";
import { llamaReferenceLogits, llamaShape, seededRandom, type NamedTensor } from "@envace/training";
import { loadHuggingFaceTokenizer } from "@envace/trajectory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxCausalLM } from "./causal-lm.js";
import { exportLlamaCheckpoint, llamaOnnxBytes } from "./export.js";
import { randomLlama, writeLlamaCheckpoint } from "./fixtures.js";
import { loadOnnxModel, type OnnxModel } from "./policy.js";
import { OnnxSampler } from "./sampler.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "envace-onnx-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const params = (input: Partial<SamplingParams> = {}) => SamplingParams.parse({ maxTokens: 8, ...input });
const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
};
const dataOf = (weights: ReadonlyMap<string, NamedTensor>) => new Map([...weights].map(([name, tensor]) => [name, tensor.data]));
const randomTokens = (random: () => number, length: number, vocab: number) => Array.from({ length }, () => Math.floor(random() * vocab));

describe("export of a Llama checkpoint", () => {
  const variants = [
    { name: "tied, multi-head", options: { seed: 1 } },
    { name: "untied, grouped KV heads", options: { seed: 2, kvHeads: 2, tied: false, layers: 3, hidden: 48, heads: 4 } },
  ];

  for (const { name, options } of variants) {
    it(`matches a reference forward pass within 1e-4 (${name})`, async () => {
      const { config, weights } = randomLlama(options);
      const checkpoint = join(root, `ckpt-${options.seed}`);
      const out = join(root, `onnx-${options.seed}`);
      await writeLlamaCheckpoint(checkpoint, config, weights);
      const result = await exportLlamaCheckpoint(checkpoint, out);
      expect((await readdir(out)).sort()).toEqual(["config.json", "model.onnx", "tokenizer.json", "tokenizer_config.json"]);
      expect(result.modelPath).toBe(join(out, "model.onnx"));

      const model = await OnnxCausalLM.load(out);
      const random = seededRandom(options.seed * 100);
      for (let trial = 0; trial < 3; trial++) {
        const tokens = randomTokens(random, 4 + Math.floor(random() * 12), config.vocab_size);
        const expected = llamaReferenceLogits(llamaShape(config), dataOf(weights), tokens);
        const actual = await model.allLogits(tokens);
        expected.forEach((row, position) => expect(maxAbsDiff(row, actual[position]!)).toBeLessThan(1e-4));
      }
    });
  }

  it("gives the same logits step by step through the KV cache as for the whole sequence", async () => {
    const { config, weights } = randomLlama({ seed: 3 });
    const model = await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights));
    const tokens = [5, 17, 200, 3, 99, 42, 7, 1];
    const full = await model.allLogits(tokens);
    let step = await model.forward(tokens.slice(0, 3));
    expect(maxAbsDiff(step.logits, full[2]!)).toBeLessThan(1e-5);
    for (let position = 3; position < tokens.length; position++) {
      step = await model.forward([tokens[position]!], step.cache);
      expect(step.cache.length).toBe(position + 1);
      expect(maxAbsDiff(step.logits, full[position]!)).toBeLessThan(1e-5);
    }
    const truncated = model.truncateCache(step.cache, 4);
    const resumed = await model.forward(tokens.slice(4), truncated);
    expect(maxAbsDiff(resumed.logits, full.at(-1)!)).toBeLessThan(1e-5);
  });

  it("can keep the cache in float16, as many Hugging Face exports do", async () => {
    const { config, weights } = randomLlama({ seed: 7 });
    const full = await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights));
    const half = await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights, "weights", { cacheType: "float16" }));
    expect(half.cacheBytesPerToken * 2).toBe(full.cacheBytesPerToken);
    const tokens = [9, 8, 7, 6, 5, 4];
    let a = await full.forward(tokens.slice(0, 3));
    let b = await half.forward(tokens.slice(0, 3));
    expect(b.cache.tensors["past_key_values.0.key"]!.type).toBe("float16");
    for (const token of tokens.slice(3)) {
      a = await full.forward([token], a.cache);
      b = await half.forward([token], half.truncateCache(b.cache, b.cache.length));
      expect(maxAbsDiff(a.logits, b.logits)).toBeLessThan(1e-2);
    }
    const resumed = await half.forward(tokens.slice(2), half.truncateCache(b.cache, 2));
    expect(maxAbsDiff(resumed.logits, a.logits)).toBeLessThan(1e-2);
  });

  it("refuses a checkpoint whose tensors disagree with its config, listing each problem", () => {
    const { config, weights } = randomLlama();
    weights.delete("model.layers.1.mlp.up_proj.weight");
    weights.set("model.norm.weight", { shape: [3], data: new Float32Array(3) });
    expect(() => llamaOnnxBytes(config, weights, "ckpt/model.safetensors")).toThrow(
      "ckpt/model.safetensors: model.norm.weight has shape [3], config.json implies [32]; missing model.layers.1.mlp.up_proj.weight",
    );
  });

  it("names a missing checkpoint folder", async () => {
    await expect(exportLlamaCheckpoint(join(root, "absent"), join(root, "x"))).rejects.toThrow(`checkpoint folder not found: ${join(root, "absent")}`);
  });
});

describe("loadOnnxModel", () => {
  let loaded: OnnxModel;
  let dir: string;
  const prompt = [{ role: "user" as const, content: "Hi" }];

  beforeAll(async () => {
    const { config, weights } = randomLlama({ seed: 4 });
    const checkpoint = join(root, "policy-ckpt");
    dir = join(root, "policy-onnx");
    await writeLlamaCheckpoint(checkpoint, config, weights);
    await exportLlamaCheckpoint(checkpoint, dir);
    loaded = await loadOnnxModel(dir);
  });

  it("loads the tokenizer and chat template through the Hugging Face loader", async () => {
    const tokenizer = await loadHuggingFaceTokenizer(dir);
    expect(tokenizer.vocabSize).toBe(259);
    expect(tokenizer.decode(tokenizer.encode("héllo <|im_end|>"))).toBe("héllo <|im_end|>");
    expect(loaded.tokenizer.stopTokenIds).toContain(258);
    expect(loaded.policy.id).toBe("onnx:policy-onnx");
  });

  it("generates a turn whose logprobs are the model's log-softmax at each step (temperature 1)", async () => {
    const generation = await loaded.policy.generate({ role: "act", messages: prompt, tools: [], sampling: params({ seed: 11, maxTokens: 6 }) });
    const promptText = loaded.tokenizer.decode(generation.promptTokens);
    expect(promptText).toBe("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    expect(generation.outputTokens.length).toBeGreaterThan(0);
    expect(generation.logprobs).toHaveLength(generation.outputTokens.length);
    const logits = await loaded.model.allLogits([...generation.promptTokens, ...generation.outputTokens]);
    generation.outputTokens.forEach((token, i) => {
      const row = logits[generation.promptTokens.length - 1 + i]!;
      const max = Math.max(...row);
      const logSumExp = max + Math.log(row.reduce((sum, v) => sum + Math.exp(v - max), 0));
      expect(generation.logprobs![i]).toBeCloseTo(row[token]! - logSumExp, 4);
    });
  });

  it("is reproducible with a seed and greedy at temperature 0", async () => {
    const sampleTwice = async (sampling: SamplingParams) => {
      const a = await loaded.sampler.sample([256, 1, 2, 3], sampling);
      loaded.sampler.clearCache();
      const b = await loaded.sampler.sample([256, 1, 2, 3], sampling);
      return [a, b];
    };
    const [a, b] = await sampleTwice(params({ seed: 5, maxTokens: 10, topP: 0.9, topK: 50 }));
    expect(a).toEqual(b);
    const [greedy] = await sampleTwice(params({ temperature: 0, maxTokens: 5 }));
    const logits = await loaded.model.allLogits([256, 1, 2, 3]);
    const best = logits.at(-1)!.indexOf(Math.max(...logits.at(-1)!));
    expect(greedy!.tokens[0]).toBe(best);
  });

  it("stops on a stop token, a stop string, the token limit, and an abort", async () => {
    const greedy = params({ temperature: 0, maxTokens: 12 });
    const free = await loaded.sampler.sample([256, 10, 11], greedy);
    expect(free.finishReason).toBe("length");
    expect(free.tokens).toHaveLength(12);

    const onFirst = new OnnxSampler(loaded.model, { stopTokenIds: [free.tokens[2]!] });
    const stopped = await onFirst.sample([256, 10, 11], greedy);
    expect(stopped).toMatchObject({ finishReason: "stop", tokens: free.tokens.slice(0, free.tokens.indexOf(free.tokens[2]!) + 1) });

    const text = loaded.tokenizer.decode(free.tokens.slice(3, 5));
    const byString = new OnnxSampler(loaded.model, { stopTokenIds: [], tokenizer: loaded.tokenizer });
    const cut = await byString.sample([256, 10, 11], { ...greedy, stop: [text] });
    expect(cut.finishReason).toBe("stop");
    expect(loaded.tokenizer.decode(cut.tokens)).toContain(text);
    expect(cut.tokens.length).toBeLessThanOrEqual(5);

    const controller = new AbortController();
    controller.abort();
    const aborted = await loaded.sampler.sample([256, 10, 11], greedy, controller.signal);
    expect(aborted).toEqual({ tokens: [], logprobs: [], finishReason: "abort" });
  });

  it("reuses the cache of an earlier sequence that the next prompt extends, with the same result", async () => {
    const greedy = params({ temperature: 0, maxTokens: 6 });
    const sampler = new OnnxSampler(loaded.model, { stopTokenIds: [] });
    const first = await sampler.sample([256, 20, 21, 22], greedy);
    const nextPrompt = [256, 20, 21, 22, ...first.tokens, 257, 30, 31];
    const second = await sampler.sample(nextPrompt, greedy);
    expect(sampler.stats.reusedTokens).toBe(4 + first.tokens.length - 1);
    const fresh = new OnnxSampler(loaded.model, { stopTokenIds: [], prefixCacheBytes: 0 });
    expect(await fresh.sample(nextPrompt, greedy)).toEqual({ ...second, logprobs: second.logprobs.map((l) => expect.closeTo(l, 4) as number) });
    expect(fresh.stats.reusedTokens).toBe(0);
  });

  it("swaps weights in place and never reuses caches built on the old ones", async () => {
    const { config, weights } = randomLlama({ seed: 4 });
    const model = await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights));
    const sampler = new OnnxSampler(model, { stopTokenIds: [] });
    await sampler.sample([1, 2, 3], params({ temperature: 0, maxTokens: 2 }));
    const before = await model.allLogits([1, 2, 3]);
    const changed = new Map(weights);
    const embed = weights.get("model.embed_tokens.weight")!;
    changed.set("model.embed_tokens.weight", { shape: embed.shape, data: embed.data.map((v) => v * -1.5) });
    await model.replaceModel(llamaOnnxBytes(config, changed));
    const after = await model.allLogits([1, 2, 3]);
    expect(maxAbsDiff(before.at(-1)!, after.at(-1)!)).toBeGreaterThan(0.1);
    const expected = llamaReferenceLogits(llamaShape(config), dataOf(changed), [1, 2, 3]);
    expect(maxAbsDiff(expected.at(-1)!, after.at(-1)!)).toBeLessThan(1e-4);
    const reusedBefore = sampler.stats.reusedTokens;
    await sampler.sample([1, 2, 3, 4], params({ temperature: 0, maxTokens: 1 }));
    expect(sampler.stats.reusedTokens).toBe(reusedBefore);
  });

  it("finishes a generation under way on the weights it started with", async () => {
    const { config, weights } = randomLlama({ seed: 8 });
    const changed = new Map([...weights].map(([name, t]) => [name, { shape: t.shape, data: t.data.map((v) => v * 0.7) }]));
    const greedy = params({ temperature: 0, maxTokens: 24 });
    const expectOld = await new OnnxSampler(await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights)), { stopTokenIds: [] }).sample([1, 2], greedy);
    const expectNew = await new OnnxSampler(await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, changed)), { stopTokenIds: [] }).sample([1, 2], greedy);
    expect(expectNew.tokens).not.toEqual(expectOld.tokens);

    const model = await OnnxCausalLM.fromBytes(llamaOnnxBytes(config, weights));
    const sampler = new OnnxSampler(model, { stopTokenIds: [] });
    const underway = sampler.sample([1, 2], greedy);
    await model.replaceModel(llamaOnnxBytes(config, changed));
    expect((await underway).tokens).toEqual(expectOld.tokens);
    expect((await sampler.sample([1, 2], greedy)).tokens).toEqual(expectNew.tokens);
  });

  it("finds the model in the transformers.js layout (onnx/model.onnx) and under an explicit file name", async () => {
    const { config, weights } = randomLlama({ seed: 6 });
    const folder = join(root, "transformers-js-layout");
    await writeLlamaCheckpoint(folder, config, weights);
    await exportLlamaCheckpoint(folder, folder);
    await mkdir(join(folder, "onnx"));
    await rename(join(folder, "model.onnx"), join(folder, "onnx", "model.onnx"));
    expect((await loadOnnxModel(folder)).model.layers).toBe(2);
    await rename(join(folder, "onnx", "model.onnx"), join(folder, "onnx", "model_fp32.onnx"));
    expect((await loadOnnxModel(folder, { file: "onnx/model_fp32.onnx" })).model.layers).toBe(2);
    await expect(loadOnnxModel(folder)).rejects.toThrow(
      `no ONNX model in ${folder}: looked for ${join(folder, "model.onnx")}, ${join(folder, "onnx/model.onnx")}`,
    );
  });

  it("names a missing folder or tokenizer file", async () => {
    await expect(loadOnnxModel(join(root, "missing"))).rejects.toThrow(join(root, "missing"));
    const bare = join(root, "bare");
    await mkdir(bare);
    // Both tokenizer files are missing; the loader reads them together and names whichever it missed first.
    const escaped = join(bare, "tokenizer").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    await expect(loadOnnxModel(bare)).rejects.toThrow(new RegExp(`missing ${escaped}(_config)?\\.json`));
  });
});
