import * as tf from "@tensorflow/tfjs-core";
import { ContextLengthError, SamplingParams, type SampledTokens, type Sampler, type SamplingParamsInput, type Tokenizer } from "@envace/protocol";
import { headDim, type TinyModelConfig } from "./config.js";
import { TrainingInputError } from "./errors.js";
import { disposeWeights, uploadWeights, type DeviceWeights } from "./device-weights.js";
import type { Parameters } from "./parameters.js";
import { Rng } from "./rng.js";
import { sampleToken } from "./sampling.js";
import { rotaryTables } from "./rotary.js";
import { topkLogprobs } from "./topk.js";
import { Transformer, type SequenceBatch } from "./transformer.js";
import { initWasmBackend, tensorFrom } from "./wasm.js";

/**
 * Sees each token as it is sampled (before the generation ends), e.g. to stream its text. The
 * final result still carries every token; a listener that throws fails the generation.
 */
export type TokenListener = (token: number, logprob: number) => void;

export interface TinySamplerOptions {
  /** Token ids that end a generation (included in the output). Defaults to the config's eos token. */
  stopTokenIds?: readonly number[];
  /** Needed only for `stop` strings in the sampling parameters. */
  tokenizer?: Pick<Tokenizer, "decode">;
  /** Seed of the generator used by requests without their own seed. */
  seed?: number;
  /** Most sequences decoded together; later requests wait for a free slot. */
  maxBatch?: number;
  /** Name of the weights, e.g. the step they were saved at. */
  name?: string;
}

interface Stream {
  prompt: readonly number[];
  params: SamplingParams;
  rng: Rng;
  tokens: number[];
  logprobs: number[];
  /** Per layer, [heads, capacity, dh]: rotated keys and values of every position so far. */
  keys: Float32Array[];
  values: Float32Array[];
  capacity: number;
  /** Positions held in the cache. */
  length: number;
  signal: AbortSignal | undefined;
  onToken: TokenListener | undefined;
  resolve: (result: SampledTokens) => void;
  reject: (error: unknown) => void;
}

/**
 * Generation from a snapshot of the tiny model's weights. Requests made while others are
 * running join them: prompts are processed together, then every live sequence advances one token
 * per step (the dense layers as one matMul over all sequences, attention over each sequence's
 * key/value cache on the host). Results do not depend on which requests run together: each row
 * of a tfjs-wasm matMul is computed independently of the others.
 */
export class TinySampler implements Sampler {
  readonly name: string;
  readonly config: TinyModelConfig;
  private readonly params: Parameters;
  private readonly stopTokenIds: ReadonlySet<number>;
  private readonly tokenizer: Pick<Tokenizer, "decode"> | undefined;
  private readonly rng: Rng;
  private readonly maxBatch: number;
  private readonly pending: Stream[] = [];
  private active: Stream[] = [];
  private running: Promise<void> | null = null;
  private rotary: { cos: Float32Array; sin: Float32Array } | null = null;

  /** `params` is used as is: pass a copy if the caller keeps training it. */
  constructor(config: TinyModelConfig, params: Parameters, options: TinySamplerOptions = {}) {
    this.config = config;
    this.params = params;
    this.name = options.name ?? "tiny";
    const stops = options.stopTokenIds ?? (config.eosTokenId !== null ? [config.eosTokenId] : []);
    for (const id of stops) {
      if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize)
        throw new TrainingInputError(`stop token id ${id} is outside the vocabulary (0..${config.vocabSize - 1})`);
    }
    this.stopTokenIds = new Set(stops);
    this.tokenizer = options.tokenizer;
    this.rng = Rng.fromSeed(options.seed ?? 0);
    this.maxBatch = options.maxBatch ?? 32;
  }

  /** `onToken` sees each token as it is sampled; an abort ends the generation after the current step with what was sampled. */
  sample(promptTokens: readonly number[], params: SamplingParamsInput, signal?: AbortSignal, onToken?: TokenListener): Promise<SampledTokens> {
    const parsed = SamplingParams.safeParse(params);
    if (!parsed.success) {
      return Promise.reject(new TrainingInputError(`sampling parameters: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`));
    }
    const p = parsed.data;
    const { vocabSize, maxPositionEmbeddings } = this.config;
    if (promptTokens.length === 0) return Promise.reject(new TrainingInputError("promptTokens is empty: the model needs at least one token to condition on"));
    const bad = promptTokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize);
    if (bad >= 0)
      return Promise.reject(new TrainingInputError(`promptTokens[${bad}] = ${promptTokens[bad]} is not a token id of this model (0..${vocabSize - 1})`));
    if (promptTokens.length >= maxPositionEmbeddings) {
      return Promise.reject(new ContextLengthError(promptTokens.length, maxPositionEmbeddings));
    }
    if (p.stop.length > 0 && !this.tokenizer) return Promise.reject(new TrainingInputError("stop strings need a tokenizer: pass one to the sampler"));
    return new Promise<SampledTokens>((resolve, reject) => {
      const capacity = Math.min(maxPositionEmbeddings, promptTokens.length + p.maxTokens);
      this.pending.push({
        prompt: [...promptTokens],
        params: p,
        rng: p.seed !== undefined ? Rng.fromSeed(p.seed) : this.rng.fork(),
        tokens: [],
        logprobs: [],
        keys: [],
        values: [],
        capacity,
        length: 0,
        signal,
        onToken,
        resolve,
        reject,
      });
      this.running ??= this.run().finally(() => {
        this.running = null;
      });
    });
  }

  /**
   * The log-probability of each prompt token after the first under these weights, from one
   * scoring pass (what a Tinker server returns as `prompt_logprobs`).
   */
  async promptLogprobs(promptTokens: readonly number[]): Promise<number[]> {
    const n = this.checkPrompt(promptTokens) - 1;
    if (n <= 0) return [];
    return this.scorePass(promptTokens, (model, weights, batch) => Array.from(model.score(weights, batch).logprobs.subarray(0, n)));
  }

  /**
   * The `k` most likely next tokens at each prompt position after the first, as [token id,
   * log-probability] pairs best first (a `k` past the vocabulary gives all of it), with the
   * prompt's own log-probabilities, from one scoring pass (a Tinker server's `topk_prompt_logprobs`).
   */
  async topkPromptLogprobs(promptTokens: readonly number[], k: number): Promise<{ logprobs: number[]; topk: [number, number][][] }> {
    if (!Number.isInteger(k) || k < 1) throw new TrainingInputError(`top-k prompt logprobs: k must be a positive integer, got ${k}`);
    const n = this.checkPrompt(promptTokens) - 1;
    if (n <= 0) return { logprobs: [], topk: [] };
    const V = this.config.vocabSize;
    return this.scorePass(promptTokens, (model, weights, batch) => {
      const logits = model.logits(weights, batch);
      const topk: [number, number][][] = [];
      const logprobs: number[] = [];
      for (let t = 0; t < n; t++) {
        const row = logits.subarray(t * V, (t + 1) * V);
        topk.push(topkLogprobs(row, k));
        // The prompt token's own log-probability: its logit less the row's logsumexp (the top-1 pair gives it).
        const [best, bestLogprob] = topk[t]![0]!;
        logprobs.push(row[promptTokens[t + 1]!]! - row[best]! + bestLogprob);
      }
      return { logprobs, topk };
    });
  }

  /** The prompt's length, once its tokens are checked against the vocabulary and the context. */
  private checkPrompt(promptTokens: readonly number[]): number {
    const { vocabSize, maxPositionEmbeddings } = this.config;
    const bad = promptTokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize);
    if (bad >= 0) throw new TrainingInputError(`promptTokens[${bad}] = ${promptTokens[bad]} is not a token id of this model (0..${vocabSize - 1})`);
    if (promptTokens.length > maxPositionEmbeddings) throw new ContextLengthError(promptTokens.length, maxPositionEmbeddings);
    return promptTokens.length;
  }

  /** One forward pass over the prompt's positions but the last, each targeting the next prompt token. */
  private async scorePass<T>(promptTokens: readonly number[], read: (model: Transformer, weights: DeviceWeights, batch: SequenceBatch) => T): Promise<T> {
    const n = promptTokens.length - 1;
    await initWasmBackend();
    // Padded to a multiple of 8 positions, as training batches are.
    const length = Math.min(this.config.maxPositionEmbeddings, Math.ceil(n / 8) * 8);
    const tokens = new Int32Array(length);
    const targets = new Int32Array(length);
    tokens.set(promptTokens.slice(0, n));
    targets.set(promptTokens.slice(1));
    const model = new Transformer(this.config);
    const weights = uploadWeights(this.config, this.params);
    try {
      return read(model, weights, { rows: 1, length, tokens, targets });
    } finally {
      disposeWeights(weights);
      model.dispose();
    }
  }

  private async run(): Promise<void> {
    await initWasmBackend();
    const model = new Transformer(this.config);
    const weights = uploadWeights(this.config, this.params);
    try {
      while (this.pending.length > 0 || this.active.length > 0) {
        const admitted = this.pending.splice(0, Math.max(0, this.maxBatch - this.active.length));
        for (const group of prefillGroups(admitted)) this.prefill(model, weights, group);
        if (this.active.length > 0) this.decode(weights);
        // Let new requests and aborts arrive between steps.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      for (const s of [...this.active, ...this.pending.splice(0)]) s.reject(error);
      this.active = [];
    } finally {
      disposeWeights(weights);
      model.dispose();
    }
  }

  private prefill(model: Transformer, weights: DeviceWeights, streams: Stream[]): void {
    const H = this.config.numHeads;
    const dh = headDim(this.config);
    const longest = Math.max(...streams.map((s) => s.prompt.length));
    const length = Math.min(this.config.maxPositionEmbeddings, Math.ceil(longest / 8) * 8);
    const tokens = new Int32Array(streams.length * length);
    streams.forEach((s, r) => tokens.set(s.prompt, r * length));
    const { keys, values, logits } = model.prefill(
      weights,
      tokens,
      streams.length,
      length,
      streams.map((s) => s.prompt.length - 1),
    );
    const V = this.config.vocabSize;
    streams.forEach((s, r) => {
      for (let l = 0; l < this.config.numLayers; l++) {
        const k = new Float32Array(H * s.capacity * dh);
        const v = new Float32Array(H * s.capacity * dh);
        for (let h = 0; h < H; h++) {
          const from = (r * H + h) * length * dh;
          k.set(keys[l]!.subarray(from, from + s.prompt.length * dh), h * s.capacity * dh);
          v.set(values[l]!.subarray(from, from + s.prompt.length * dh), h * s.capacity * dh);
        }
        s.keys.push(k);
        s.values.push(v);
      }
      s.length = s.prompt.length;
      this.active.push(s);
      this.advance(s, logits.subarray(r * V, (r + 1) * V));
    });
    this.active = this.active.filter((s) => !this.finishIfDone(s));
  }

  /** Sample the next token of `s` from its logits. */
  private advance(s: Stream, logits: Float32Array): void {
    const { token, logprob } = sampleToken(logits, s.params, () => s.rng.next());
    s.tokens.push(token);
    s.logprobs.push(logprob);
    s.onToken?.(token, logprob);
  }

  private finishIfDone(s: Stream): boolean {
    const last = s.tokens[s.tokens.length - 1];
    let reason: SampledTokens["finishReason"] | null = null;
    if (s.signal?.aborted) reason = "abort";
    else if (last !== undefined && this.stopTokenIds.has(last)) reason = "stop";
    else if (s.params.stop.length > 0 && this.endsWithStop(s)) reason = "stop";
    else if (s.tokens.length >= s.params.maxTokens || s.prompt.length + s.tokens.length >= s.capacity) reason = "length";
    if (reason === null) return false;
    s.keys = [];
    s.values = [];
    s.resolve({ tokens: s.tokens, logprobs: s.logprobs, finishReason: reason });
    return true;
  }

  /** Whether a stop string appears in the text of the latest tokens (it can span several tokens). */
  private endsWithStop(s: Stream): boolean {
    const longest = Math.max(...s.params.stop.map((x) => x.length));
    const window = s.tokens.slice(-(4 * longest + 4));
    const text = this.tokenizer!.decode(window);
    return s.params.stop.some((x) => text.includes(x));
  }

  /** One decoding step for every active stream: feed its last token, sample the next. */
  private decode(weights: DeviceWeights): void {
    const streams = this.active;
    const S = streams.length;
    const { hiddenSize: D, numHeads: H, rmsNormEps: eps, vocabSize: V } = this.config;
    const dh = headDim(this.config);
    const table = weights.embedHost;
    const xHost = new Float32Array(S * D);
    streams.forEach((s, i) => {
      const t = s.tokens[s.tokens.length - 1]!;
      xHost.set(table.subarray(t * D, (t + 1) * D), i * D);
    });
    let x = tensorFrom(xHost, [S, D]);
    const rotary = (this.rotary ??= rotaryTables(this.config, this.config.maxPositionEmbeddings));
    const scale = 1 / Math.sqrt(dh);
    const half = dh / 2;
    for (let l = 0; l < this.config.numLayers; l++) {
      const w = weights.layers[l]!;
      const qkvT = tf.tidy(() => tf.matMul(rmsNormRows(x, w.inputNorm, eps), w.qkvF));
      const qkv = qkvT.dataSync();
      qkvT.dispose();
      const attn = new Float32Array(S * D);
      const q = new Float32Array(dh);
      const scores = new Float32Array(this.config.maxPositionEmbeddings);
      for (let i = 0; i < S; i++) {
        const s = streams[i]!;
        const pos = s.length;
        const keys = s.keys[l]!;
        const values = s.values[l]!;
        const base = i * 3 * D;
        for (let h = 0; h < H; h++) {
          // Rotate q and k at position `pos` (rotate_half convention), store k and v in the cache.
          const cacheAt = (h * s.capacity + pos) * dh;
          for (let j = 0; j < dh; j++) {
            const c = rotary.cos[pos * dh + j]!;
            const sn = rotary.sin[pos * dh + j]!;
            const partner = j < half ? -qkv[base + h * dh + j + half]! : qkv[base + h * dh + j - half]!;
            q[j] = (qkv[base + h * dh + j]! * c + partner * sn) * scale;
            const kPartner = j < half ? -qkv[base + D + h * dh + j + half]! : qkv[base + D + h * dh + j - half]!;
            keys[cacheAt + j] = qkv[base + D + h * dh + j]! * c + kPartner * sn;
            values[cacheAt + j] = qkv[base + 2 * D + h * dh + j]!;
          }
          attendHead(q, keys, values, h * s.capacity * dh, pos + 1, dh, attn, i * D + h * dh, scores);
        }
      }
      const next = tf.tidy(() => {
        const x1 = tf.add(x, tf.matMul(tensorFrom(attn, [S, D]), w.oF));
        const h2 = rmsNormRows(x1, w.postNorm, eps);
        const gate = tf.matMul(h2, w.gateF);
        const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), tf.matMul(h2, w.upF));
        return tf.add(x1, tf.matMul(act, w.downF));
      });
      x.dispose();
      x = next;
    }
    const logitsT = tf.tidy(() => tf.matMul(rmsNormRows(x, weights.finalNorm, eps), weights.embedT));
    x.dispose();
    const logits = logitsT.dataSync() as Float32Array;
    logitsT.dispose();
    streams.forEach((s, i) => {
      s.length += 1;
      this.advance(s, logits.subarray(i * V, (i + 1) * V));
    });
    this.active = streams.filter((s) => !this.finishIfDone(s));
  }
}

/** Prompts are processed together up to this many padded tokens (bounds the activations' memory). */
const PREFILL_TOKENS = 4096;

/** Streams grouped for prompt processing: similar lengths together, each group within the token budget. */
function prefillGroups(streams: readonly Stream[]): Stream[][] {
  const sorted = [...streams].sort((a, b) => b.prompt.length - a.prompt.length);
  const groups: Stream[][] = [];
  let current: Stream[] = [];
  let width = 0;
  for (const s of sorted) {
    if (current.length > 0 && (current.length + 1) * width > PREFILL_TOKENS) {
      groups.push(current);
      current = [];
    }
    if (current.length === 0) width = Math.ceil(s.prompt.length / 8) * 8;
    current.push(s);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/**
 * One head's attention for one new position: softmax over the `count` cached keys (starting at
 * `at`, `dh` floats each) of their dot products with `q`, then the weighted sum of the values,
 * added into `out` at `outAt`. Plain loops, unrolled by four: V8 compiles them to tight scalar code.
 */
function attendHead(
  q: Float32Array,
  keys: Float32Array,
  values: Float32Array,
  at: number,
  count: number,
  dh: number,
  out: Float32Array,
  outAt: number,
  scores: Float32Array,
): void {
  let max = -Infinity;
  for (let t = 0; t < count; t++) {
    const k0 = at + t * dh;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    let j = 0;
    for (; j + 3 < dh; j += 4) {
      d0 += q[j]! * keys[k0 + j]!;
      d1 += q[j + 1]! * keys[k0 + j + 1]!;
      d2 += q[j + 2]! * keys[k0 + j + 2]!;
      d3 += q[j + 3]! * keys[k0 + j + 3]!;
    }
    for (; j < dh; j++) d0 += q[j]! * keys[k0 + j]!;
    const dot = d0 + d1 + (d2 + d3);
    scores[t] = dot;
    if (dot > max) max = dot;
  }
  let total = 0;
  for (let t = 0; t < count; t++) {
    const e = Math.exp(scores[t]! - max);
    scores[t] = e;
    total += e;
  }
  const inv = 1 / total;
  for (let t = 0; t < count; t++) {
    const p = scores[t]! * inv;
    const v0 = at + t * dh;
    let j = 0;
    for (; j + 3 < dh; j += 4) {
      out[outAt + j]! += p * values[v0 + j]!;
      out[outAt + j + 1]! += p * values[v0 + j + 1]!;
      out[outAt + j + 2]! += p * values[v0 + j + 2]!;
      out[outAt + j + 3]! += p * values[v0 + j + 3]!;
    }
    for (; j < dh; j++) out[outAt + j]! += p * values[v0 + j]!;
  }
}

function rmsNormRows(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), 1, true), eps))), weight);
}
