import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SamplingParams } from "@envace/protocol";
import { InProcessBackend, seededRandom, TinyModelConfig, type Datum } from "@envace/training";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportLlamaCheckpoint } from "../onnx/export.js";
import { byteTokenizerFiles, randomLlama, writeLlamaCheckpoint } from "../onnx/fixtures.js";
import { loadOnnxModel } from "../onnx/policy.js";
import { policyFromSpec } from "../spec.js";
import { ChatTemplate } from "@envace/trajectory";
import { TINY_CHAT_TEMPLATE } from "./chat-template.js";
import { TinyOnnxEngine } from "./onnx-sync.js";
import { loadTinyModel } from "./tiny.js";

const config = TinyModelConfig.parse({
  vocabSize: 259,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  maxPositionEmbeddings: 256,
  eosTokenId: 258,
});

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "envace-tiny-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const random = seededRandom(31);
const sequences = Array.from({ length: 4 }, (_, i) => Array.from({ length: 6 + 5 * i }, () => Math.floor(random() * config.vocabSize)));

/** Next-token data over a whole sequence, as the trainer builds it. */
const datum = (tokens: number[]): Datum => ({
  tokens: tokens.slice(0, -1),
  targetTokens: tokens.slice(1),
  logprobs: tokens.slice(1).map(() => 0),
  advantages: tokens.slice(1).map(() => 1),
  mask: tokens.slice(1).map(() => 1),
});

/** The ONNX model's log-probability of each next token, from its logits. */
async function onnxLogprobs(engine: TinyOnnxEngine, tokens: number[]): Promise<number[]> {
  const logits = await engine.model.allLogits(tokens.slice(0, -1));
  return logits.map((row, i) => {
    const max = Math.max(...row);
    const logSumExp = max + Math.log(row.reduce((sum, v) => sum + Math.exp(v - max), 0));
    return row[tokens[i + 1]!]! - logSumExp;
  });
}

const maxGap = (a: number[][], b: number[][]) => Math.max(...a.flatMap((row, i) => row.map((v, j) => Math.abs(v - b[i]![j]!))));

describe("the tiny model on onnxruntime", () => {
  it("agrees with the tfjs model within 1e-4 on random inputs, before and after an optimizer step", async () => {
    const backend = await InProcessBackend.create(config, { seed: 5 });
    const engine = await TinyOnnxEngine.create(config, backend.parameters());
    const data = sequences.map(datum);
    const check = async () => maxGap(await backend.forward(data), await Promise.all(sequences.map((s) => onnxLogprobs(engine, s))));
    expect(await check()).toBeLessThan(1e-4);

    await backend.forwardBackward(data, { type: "cross_entropy" });
    await backend.optimStep({ learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
    const stale = await check();
    const timing = await engine.sync(backend.parameters());
    expect(stale).toBeGreaterThan(1e-3);
    expect(await check()).toBeLessThan(1e-4);
    expect(timing.totalMs).toBeGreaterThan(0);
    expect(engine.syncs).toEqual([timing]);
  });

  it("exports a training checkpoint to a folder that the Hugging Face ONNX loader reads", async () => {
    const backend = await InProcessBackend.create(config, { seed: 6 });
    const checkpoint = join(root, "step-0");
    await backend.saveCheckpoint(checkpoint);
    const { tokenizer, config: tokenizerConfig } = byteTokenizerFiles();
    await writeFile(join(checkpoint, "tokenizer.json"), JSON.stringify(tokenizer));
    await writeFile(join(checkpoint, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
    const out = join(root, "step-0-onnx");
    await exportLlamaCheckpoint(checkpoint, out);
    const loaded = await loadOnnxModel(out);
    const sequence = sequences[1]!;
    const logits = await loaded.model.allLogits(sequence.slice(0, -1));
    const fromOnnx = logits.map((row, i) => {
      const max = Math.max(...row);
      return row[sequence[i + 1]!]! - (max + Math.log(row.reduce((sum, v) => sum + Math.exp(v - max), 0)));
    });
    expect(maxGap(await backend.forward([datum(sequence)]), [fromOnnx])).toBeLessThan(1e-4);
  });
});

describe("TINY_CHAT_TEMPLATE", () => {
  it("renders ChatML turns with tools, reasoning, tool calls and tool responses", () => {
    const template = new ChatTemplate(TINY_CHAT_TEMPLATE);
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } }];
    const call = (name: string, args: string) => ({ id: name, type: "function" as const, function: { name, arguments: args } });
    const text = template.render(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        { role: "assistant", content: "Checking.", reasoning_content: "need a tool", tool_calls: [call("get_weather", '{"city": "Oslo"}'), call("w", "{}")] },
        { role: "tool", tool_call_id: "get_weather", content: '{"temp": 3}' },
        { role: "assistant", content: null, tool_calls: [call("w", "{}")] },
      ],
      { tools, addGenerationPrompt: true },
    );
    expect(text).toBe(
      '<|im_start|>system\nBe brief.\n\n# Tools\n\nTo call a tool, write <tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call>. The tools:\n<tools>\n' +
        '{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}\n</tools><|im_end|>\n' +
        "<|im_start|>user\nWeather?<|im_end|>\n" +
        '<|im_start|>assistant\n<think>\nneed a tool\n</think>\n\nChecking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n<tool_call>\n{"name": "w", "arguments": {}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"temp": 3}\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>\n{"name": "w", "arguments": {}}\n</tool_call><|im_end|>\n' +
        "<|im_start|>assistant\n",
    );
    expect(
      template.render([
        { role: "system", content: "S" },
        { role: "user", content: "Hi" },
      ]),
    ).toBe("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
  });
});

describe("loadTinyModel", () => {
  let dir: string;
  beforeAll(async () => {
    const { config: hf, weights } = randomLlama({ seed: 12, hidden: 32, heads: 4, layers: 2 });
    dir = join(root, "tiny-ckpt");
    await writeLlamaCheckpoint(dir, hf, weights);
  });

  it("serves the same greedy turn from the tfjs and the onnx engine", async () => {
    const request = {
      role: "act" as const,
      messages: [{ role: "user" as const, content: "Hello" }],
      tools: [],
      sampling: SamplingParams.parse({ temperature: 0, maxTokens: 12 }),
    };
    const tfjs = await loadTinyModel(dir);
    const onnx = await loadTinyModel(dir, { engine: "onnx" });
    expect([tfjs.engine, onnx.engine]).toEqual(["tfjs", "onnx"]);
    const a = await tfjs.policy.generate(request);
    const b = await onnx.policy.generate(request);
    expect(a.promptTokens).toEqual(b.promptTokens);
    expect(b.outputTokens).toEqual(a.outputTokens);
    // Greedy decoding is a point mass: both report logprob 0 for every token.
    expect(b.logprobs).toEqual(a.logprobs);
    expect(a.logprobs!.every((l) => l === 0)).toBe(true);
    expect(a.text).toBe(b.text);
  });

  it("resolves tiny: specs with either engine", async () => {
    expect((await policyFromSpec(`tiny:${dir}`)).policy.id).toBe(`tiny:${dir}`);
    const onnx = await policyFromSpec(`tiny:${dir},engine=onnx,threads=1`);
    expect(onnx.sampler).toBeDefined();
    await expect(policyFromSpec(`tiny:${dir},engine=gpu`)).rejects.toThrow('engine must be one of tfjs, onnx, got "gpu"');
  });

  it("uses the built-in template when the checkpoint's tokenizer has none", async () => {
    const plain = join(root, "no-template");
    const { config: hf, weights } = randomLlama({ seed: 14 });
    await writeLlamaCheckpoint(plain, hf, weights);
    const { tokenizer, config: tokenizerConfig } = byteTokenizerFiles();
    const { chat_template: _, ...withoutTemplate } = tokenizerConfig as Record<string, unknown>;
    await writeFile(join(plain, "tokenizer_config.json"), JSON.stringify(withoutTemplate));
    await writeFile(join(plain, "tokenizer.json"), JSON.stringify(tokenizer));
    const tiny = await loadTinyModel(plain);
    const generation = await tiny.policy.generate({
      role: "act",
      messages: [{ role: "user", content: "Hi" }],
      tools: [],
      sampling: SamplingParams.parse({ maxTokens: 3, seed: 1 }),
    });
    expect(tiny.tokenizer.decode(generation.promptTokens)).toBe("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  });

  it("names a checkpoint folder without a tokenizer", async () => {
    const bare = join(root, "no-tokenizer");
    const { config: hf, weights } = randomLlama({ seed: 13 });
    await writeLlamaCheckpoint(bare, hf, weights);
    await rm(join(bare, "tokenizer.json"));
    await expect(loadTinyModel(bare)).rejects.toThrow(join(bare, "tokenizer.json"));
  });
});
