/**
 * Generation speed of the tiny model: onnxruntime with a KV cache against tfjs recomputing the
 * whole sequence for every token, with the same weights and prompts in one run. The training
 * package's own tfjs sampler (which keeps a KV cache) and the cost of a weight sync are reported
 * beside them.
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { SamplingParams, type Sampler } from "@envace/protocol";
import {
  initParameters,
  initWasmBackend,
  llamaShape,
  sampleToken,
  seededRandom,
  TinyModelConfig,
  TinySampler,
  toHfConfig,
  type Parameters,
} from "@envace/training";
import * as tf from "@tensorflow/tfjs";
import { TinyOnnxEngine } from "./tiny/onnx-sync.js";

// The trainer's default tiny model (apps/trainer config defaults); no stop token, so every run
// generates exactly the same number of tokens.
const config = TinyModelConfig.parse({
  vocabSize: 512,
  hiddenSize: 128,
  intermediateSize: 352,
  numLayers: 4,
  numHeads: 4,
  maxPositionEmbeddings: 1024,
  eosTokenId: null,
});
const PROMPTS = 3;
const PROMPT_LENGTH = 64;
const NEW_TOKENS = 128;

const params = initParameters(config, 1);
const random = seededRandom(2024);
const prompts = Array.from({ length: PROMPTS }, () => Array.from({ length: PROMPT_LENGTH }, () => Math.floor(random() * config.vocabSize)));
const sampling = (seed: number) => SamplingParams.parse({ temperature: 1, maxTokens: NEW_TOKENS, seed });

/** A plain tfjs forward pass of the same Llama block over the whole sequence; returns the last position's logits. */
class TfjsRecompute implements Sampler {
  readonly #w: Map<string, tf.Tensor>;
  readonly #shape = llamaShape(toHfConfig(config));

  constructor(weights: Parameters) {
    const shape = this.#shape;
    this.#w = new Map();
    for (const [name, data] of weights) {
      const isMatrix = data.length !== shape.hidden;
      if (name === "model.embed_tokens.weight") {
        const embed = tf.tensor2d(data, [shape.vocab, shape.hidden]);
        this.#w.set(name, embed);
        this.#w.set("head", tf.transpose(embed));
      } else if (isMatrix) {
        const rows = name.includes("down_proj") || name.includes("o_proj") ? shape.hidden : data.length / shape.hidden;
        // Stored [out, in]; keep [in, out] so every product is a plain matMul.
        this.#w.set(name, tf.transpose(tf.tensor2d(data, [rows, data.length / rows])));
      } else this.#w.set(name, tf.tensor1d(data));
    }
  }

  logits(tokens: readonly number[]): Float32Array {
    const { hidden, heads, headDim, layers, eps, ropeTheta } = this.#shape;
    const w = (name: string): tf.Tensor => this.#w.get(name)!;
    const length = tokens.length;
    const out = tf.tidy(() => {
      const rms = (x: tf.Tensor, weight: tf.Tensor) => tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), weight);
      const positions = tf.range(0, length).reshape([length, 1]);
      const invFreq = tf.tensor1d(Array.from({ length: headDim / 2 }, (_, i) => 1 / ropeTheta ** ((2 * i) / headDim))).reshape([1, headDim / 2]);
      const angles = tf.concat([tf.mul(positions, invFreq), tf.mul(positions, invFreq)], 1).reshape([1, length, headDim]);
      const cos = tf.cos(angles);
      const sin = tf.sin(angles);
      const rope = (x: tf.Tensor) => {
        const [a, b] = tf.split(x, 2, 2);
        return tf.add(tf.mul(x, cos), tf.mul(tf.concat([tf.neg(b!), a!], 2), sin));
      };
      const causal = tf.sub(tf.linalg.bandPart(tf.ones([length, length]), -1, 0), 1).mul(1e9);
      const toHeads = (x: tf.Tensor) => tf.transpose(x.reshape([length, heads, headDim]), [1, 0, 2]);
      let x: tf.Tensor = tf.gather(w("model.embed_tokens.weight"), tf.tensor1d(tokens as number[], "int32"));
      for (let i = 0; i < layers; i++) {
        const p = `model.layers.${i}`;
        const n = rms(x, w(`${p}.input_layernorm.weight`));
        const q = rope(toHeads(tf.matMul(n, w(`${p}.self_attn.q_proj.weight`))));
        const k = rope(toHeads(tf.matMul(n, w(`${p}.self_attn.k_proj.weight`))));
        const v = toHeads(tf.matMul(n, w(`${p}.self_attn.v_proj.weight`)));
        const scores = tf.add(tf.mul(tf.matMul(q, tf.transpose(k, [0, 2, 1])), 1 / Math.sqrt(headDim)), causal);
        const context = tf.transpose(tf.matMul(tf.softmax(scores), v), [1, 0, 2]).reshape([length, hidden]);
        x = tf.add(x, tf.matMul(context, w(`${p}.self_attn.o_proj.weight`)));
        const y = rms(x, w(`${p}.post_attention_layernorm.weight`));
        const gate = tf.matMul(y, w(`${p}.mlp.gate_proj.weight`));
        const up = tf.matMul(y, w(`${p}.mlp.up_proj.weight`));
        x = tf.add(x, tf.matMul(tf.mul<tf.Tensor2D>(tf.mul(gate, tf.sigmoid(gate)), up), w(`${p}.mlp.down_proj.weight`)));
      }
      const last = tf.slice(x, [length - 1, 0], [1, hidden]);
      return tf.matMul(rms(last, w("model.norm.weight")), w("head"));
    });
    const logits = out.dataSync() as Float32Array;
    out.dispose();
    return logits;
  }

  sample(promptTokens: readonly number[], p: SamplingParams): Promise<{ tokens: number[]; logprobs: number[]; finishReason: "length" }> {
    const randomSource = seededRandom(p.seed ?? 0);
    const sequence = [...promptTokens];
    const tokens: number[] = [];
    const logprobs: number[] = [];
    while (tokens.length < p.maxTokens) {
      const drawn = sampleToken(this.logits(sequence), p, randomSource);
      tokens.push(drawn.token);
      logprobs.push(drawn.logprob);
      sequence.push(drawn.token);
    }
    return Promise.resolve({ tokens, logprobs, finishReason: "length" });
  }
}

async function measure(name: string, sampler: Sampler): Promise<{ name: string; tokensPerSecond: number; seconds: number; outputs: number[][] }> {
  // One short warm-up call (session and kernel initialisation), not timed.
  await sampler.sample(prompts[0]!.slice(0, 8), SamplingParams.parse({ maxTokens: 4, seed: 0 }));
  const started = performance.now();
  const outputs: number[][] = [];
  let generated = 0;
  for (const [i, prompt] of prompts.entries()) {
    const result = await sampler.sample(prompt, sampling(i));
    generated += result.tokens.length;
    outputs.push(result.tokens);
  }
  const seconds = (performance.now() - started) / 1000;
  return { name, tokensPerSecond: generated / seconds, seconds, outputs };
}

await initWasmBackend();
const onnx = await TinyOnnxEngine.create(config, params, { prefixCacheBytes: 0 });
const onnxAllCores = await TinyOnnxEngine.create(config, params, { prefixCacheBytes: 0, threads: cpus().length });
const recompute = new TfjsRecompute(params);

// Same weights: the two implementations must agree on the logits before their speed means anything.
const check = prompts[0]!.slice(0, 32);
const fromTfjs = recompute.logits(check);
const fromOnnx = (await onnx.model.forward(check)).logits;
const logitsGap = fromTfjs.reduce((max, v, i) => Math.max(max, Math.abs(v - fromOnnx[i]!)), 0);

console.log(
  `tiny model ${config.numLayers} layers × ${config.hiddenSize} hidden, vocab ${config.vocabSize}; ${PROMPTS} prompts × ${PROMPT_LENGTH} tokens, ${NEW_TOKENS} new tokens each, temperature 1`,
);
console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")} (shared)`,
);
console.log(`same weights: max |logit(onnx) − logit(tfjs)| = ${logitsGap.toExponential(2)}`);

const results = [
  await measure("onnxruntime, KV cache (1 thread, the default)", onnx.sampler),
  await measure(`onnxruntime, KV cache (${cpus().length} threads)`, onnxAllCores.sampler),
  await measure("tfjs-wasm, full-sequence recompute", recompute),
  await measure("tfjs-wasm TinySampler (training package, KV cache)", new TinySampler(config, params, { maxBatch: 1 })),
];
const baseline = results[2]!.tokensPerSecond;
console.log("");
for (const r of results) {
  console.log(
    `${r.name.padEnd(54)} ${r.tokensPerSecond.toFixed(0).padStart(7)} tokens/s  (${r.seconds.toFixed(2)} s)  ${(r.tokensPerSecond / baseline).toFixed(1)}× recompute`,
  );
}
const sameTokens = results[0]!.outputs.every((tokens, i) => tokens.every((t, j) => t === results[2]!.outputs[i]![j]));
console.log(`ONNX and tfjs recompute sampled ${sameTokens ? "identical" : "different"} tokens with the same seeds`);

const syncs = [];
for (let i = 0; i < 5; i++) syncs.push(await onnx.sync(params));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `weight sync (rebuild ONNX bytes in memory + new session), mean of ${syncs.length}: ${mean(syncs.map((s) => s.totalMs)).toFixed(1)} ms ` +
    `(export ${mean(syncs.map((s) => s.exportMs)).toFixed(1)} ms, session ${mean(syncs.map((s) => s.loadMs)).toFixed(1)} ms, ${(syncs[0]!.modelBytes / 2 ** 20).toFixed(2)} MiB)`,
);
