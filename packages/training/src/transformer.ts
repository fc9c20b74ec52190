import * as tf from "@tensorflow/tfjs-core";
import { headDim, type TinyModelConfig } from "./config.js";
import type { DeviceWeights, LayerWeights } from "./device-weights.js";
import { rmsNorm, rmsNormBackward } from "./rms-norm.js";
import { rotaryTables } from "./rotary.js";
import { readScores } from "./scores.js";
import { block, heapView, scoped, stackBlocks, tensorFrom, transpose2d } from "./wasm.js";

/**
 * The tiny transformer's forward and backward passes, written out by hand on tfjs-wasm kernels.
 *
 * tfjs's automatic differentiation is not used: its matMul gradient multiplies with transpose
 * flags, which tfjs-wasm runs about ten times slower than a plain matMul, and the attention would
 * go through batched matMuls, which run slower still. Here every multiplication is a plain 2-D
 * matMul (attention is one pair per sequence and head), every transpose keeps the innermost axis
 * or uses `transpose2d`, and the gradient of each block is derived explicitly (the finite-difference
 * test checks them all). Activations are [N, D] with N = rows·length; heads are [rows·heads, length, headDim].
 */

/**
 * How attention is computed. `per-head`: one pair of plain 2-D matMuls per sequence and head
 * (fast for long sequences). `batched`: tfjs batched matMuls over all of them at once (tfjs-wasm
 * runs these outside XNNPACK, several times slower per FLOP, but in a handful of kernel calls,
 * which wins for short sequences). `auto` picks by sequence length and head size.
 */
export type AttentionKernel = "auto" | "per-head" | "batched";

/** A padded batch of token sequences: `rows` sequences of `length` tokens, row-major. */
export interface SequenceBatch {
  rows: number;
  length: number;
  tokens: Int32Array;
  /** Target token of each position (what it predicts); used for log-probabilities. */
  targets: Int32Array;
  /** Scores are of softmax(logits / temperature) (default 1). */
  temperature?: number;
}

interface LayerCache {
  u1: tf.Tensor;
  r1: tf.Tensor;
  xn1: tf.Tensor;
  qr: tf.Tensor;
  kr: tf.Tensor;
  v: tf.Tensor;
  probs: tf.Tensor[];
  o: tf.Tensor;
  u2: tf.Tensor;
  r2: tf.Tensor;
  xn2: tf.Tensor;
  up: tf.Tensor;
  sig: tf.Tensor;
  silu: tf.Tensor;
  act: tf.Tensor;
}

interface HeadCache {
  uf: tf.Tensor;
  rf: tf.Tensor;
  hf: tf.Tensor;
  logits: tf.Tensor;
  probs: tf.Tensor;
  meanLogit: tf.Tensor;
}

/** Log-probability of each target and entropy of each position's next-token distribution. */
export interface TokenScores {
  logprobs: Float32Array;
  entropies: Float32Array;
}

/** Gradients of one backward pass, in the layouts the passes produce them (see `GradientAccumulator`). */
export type RawGradients = Map<string, tf.Tensor>;

/** Attention probabilities are kept for the backward pass up to this many floats, else recomputed. */
const KEEP_PROBS_MAX_FLOATS = 48 * 1024 * 1024;

interface Tables {
  cos: tf.Tensor;
  sin: tf.Tensor;
  /** cos and sin times 1/√headDim: the attention scale folded into the query rotation. */
  cosQ: tf.Tensor;
  sinQ: tf.Tensor;
  mask: tf.Tensor;
}

export class Transformer {
  readonly config: TinyModelConfig;
  private readonly D: number;
  private readonly H: number;
  private readonly dh: number;
  private readonly tables = new Map<number, Tables>();
  /** rotate_half as a [dh, dh] matrix: (x·R) = [−x₂, x₁] for the halves x₁, x₂ of a head. */
  private readonly rotate: tf.Tensor;
  private readonly rotateT: tf.Tensor;

  constructor(
    config: TinyModelConfig,
    private readonly kernel: AttentionKernel = "auto",
  ) {
    this.config = config;
    this.D = config.hiddenSize;
    this.H = config.numHeads;
    this.dh = headDim(config);
    const dh = this.dh;
    const half = dh / 2;
    const r = new Float32Array(dh * dh);
    for (let j = 0; j < half; j++) {
      r[(j + half) * dh + j] = -1;
      r[j * dh + j + half] = 1;
    }
    this.rotate = tensorFrom(r, [dh, dh]);
    this.rotateT = transpose2d(this.rotate);
  }

  dispose(): void {
    this.rotate.dispose();
    this.rotateT.dispose();
    for (const t of this.tables.values()) for (const x of Object.values(t) as tf.Tensor[]) x.dispose();
    this.tables.clear();
  }

  /** Rotary tables for positions 0..length−1, computed in float32 as Hugging Face Llama does. */
  private tablesFor(length: number): Tables {
    const cached = this.tables.get(length);
    if (cached) return cached;
    if (this.tables.size >= 8) {
      const [oldest, t] = this.tables.entries().next().value!;
      for (const x of Object.values(t) as tf.Tensor[]) x.dispose();
      this.tables.delete(oldest);
    }
    const { cos, sin } = rotaryTables(this.config, length);
    const scale = 1 / Math.sqrt(this.dh);
    const mask = new Float32Array(length * length);
    for (let i = 0; i < length; i++) mask.fill(-Infinity, i * length + i + 1, (i + 1) * length);
    const tables: Tables = {
      cos: tensorFrom(cos, [length, this.dh]),
      sin: tensorFrom(sin, [length, this.dh]),
      cosQ: tensorFrom(
        cos.map((c) => c * scale),
        [length, this.dh],
      ),
      sinQ: tensorFrom(
        sin.map((s) => s * scale),
        [length, this.dh],
      ),
      mask: tensorFrom(mask, [length, length]),
    };
    this.tables.set(length, tables);
    return tables;
  }

  /** The embedding rows of `tokens`, looked up on the host. */
  private embed(weights: DeviceWeights, tokens: Int32Array): tf.Tensor {
    const D = this.D;
    const x = new Float32Array(tokens.length * D);
    const table = weights.embedHost;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      x.set(table.subarray(t * D, (t + 1) * D), i * D);
    }
    return tensorFrom(x, [tokens.length, D]);
  }

  private rope(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor): tf.Tensor {
    return tf.tidy(() => {
      const rotated = tf.reshape(tf.matMul(tf.reshape(x, [-1, this.dh]), this.rotate), x.shape);
      return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
    });
  }

  private ropeBackward(dy: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor): tf.Tensor {
    return tf.tidy(() => {
      const rotated = tf.reshape(tf.matMul(tf.reshape(tf.mul(dy, sin), [-1, this.dh]), this.rotateT), dy.shape);
      return tf.add(tf.mul(dy, cos), rotated);
    });
  }

  /** Split [N, 3D] projections into q, k, v of shape [rows·heads, length, dh]. */
  private splitHeads(qkv: tf.Tensor, rows: number, length: number): [tf.Tensor, tf.Tensor, tf.Tensor] {
    const { D, H, dh } = this;
    const BH = rows * H;
    const heads = tf.tidy(() => {
      const grouped = tf.reshape(tf.transpose(tf.reshape(qkv, [rows, length, 3, D]), [2, 0, 1, 3]), [3 * rows, length, H, dh]);
      return tf.reshape(tf.transpose(grouped, [0, 2, 1, 3]), [3 * BH, length, dh]);
    });
    const third = [BH, ...heads.shape.slice(1)];
    const parts = [block(heads, 0, third), block(heads, 1, third), block(heads, 2, third)] as const;
    heads.dispose();
    return [...parts];
  }

  private attentionProbs(qr: tf.Tensor, kT: tf.Tensor, i: number, mask: tf.Tensor): tf.Tensor {
    return tf.tidy(() => {
      const length = qr.shape[1]!;
      const q = block(qr, i, [length, this.dh]);
      const k = block(kT, i, [this.dh, length]);
      return tf.softmax(tf.add(tf.matMul(q, k), mask));
    });
  }

  /** Whether attention over sequences of `length` runs as batched matMuls (see `AttentionKernel`). */
  private batched(length: number): boolean {
    if (this.kernel !== "auto") return this.kernel === "batched";
    return length * length * this.dh <= 32 * 32 * 32;
  }

  /**
   * Causal softmax attention of every sequence and head: the outputs [BH, T, dh] and, when
   * `keep`, the attention probabilities for the backward pass.
   */
  private attention(qr: tf.Tensor, kr: tf.Tensor, v: tf.Tensor, mask: tf.Tensor, keep: boolean): { heads: tf.Tensor; probs: tf.Tensor[] } {
    const [BH, length] = qr.shape as [number, number, number];
    const kT = tf.transpose(kr, [0, 2, 1]);
    if (this.batched(length)) {
      const p = tf.softmax(tf.add(tf.matMul(qr, kT), mask));
      return { heads: tf.matMul(p, v), probs: keep ? [p] : [] };
    }
    const heads: tf.Tensor[] = [];
    const probs: tf.Tensor[] = [];
    for (let i = 0; i < BH; i++) {
      const p = this.attentionProbs(qr, kT, i, mask);
      heads.push(tf.tidy(() => tf.matMul(p, block(v, i, [length, this.dh]))));
      if (keep) probs.push(p);
      else p.dispose();
    }
    return { heads: stackBlocks(heads), probs };
  }

  /** Gradients of the attention inputs (rotated q, rotated k, v) given the gradient of its outputs. */
  private attentionBackward(c: LayerCache, dHeads: tf.Tensor, mask: tf.Tensor): { dQr: tf.Tensor; dKr: tf.Tensor; dV: tf.Tensor } {
    const [BH, length, dh] = c.qr.shape as [number, number, number];
    const vT = tf.transpose(c.v, [0, 2, 1]);
    const kT = c.probs.length > 0 ? null : tf.transpose(c.kr, [0, 2, 1]);
    // softmax backward: dS = P ⊙ (dP − rowsum(dP ⊙ P))
    const softmaxBackward = (p: tf.Tensor, dP: tf.Tensor) => tf.mul(p, tf.sub(dP, tf.sum(tf.mul(dP, p), -1, true)));
    if (this.batched(length)) {
      const p = c.probs[0] ?? tf.softmax(tf.add(tf.matMul(c.qr, kT!), mask));
      const dS = softmaxBackward(p, tf.matMul(dHeads, vT));
      return {
        dQr: tf.matMul(dS, c.kr),
        dKr: tf.matMul(tf.transpose(dS, [0, 2, 1]), c.qr),
        dV: tf.matMul(tf.transpose(p, [0, 2, 1]), dHeads),
      };
    }
    const dq: tf.Tensor[] = [];
    const dk: tf.Tensor[] = [];
    const dv: tf.Tensor[] = [];
    for (let i = 0; i < BH; i++) {
      const [a, b, d] = scoped((): [tf.Tensor, tf.Tensor, tf.Tensor] => {
        const p = c.probs[i] ?? this.attentionProbs(c.qr, kT!, i, mask);
        const dO = block(dHeads, i, [length, dh]);
        const dS = softmaxBackward(p, tf.matMul(dO, block(vT, i, [dh, length])));
        // dK = dSᵀ·Q and dV = Pᵀ·dO, with the [T, T] factor transposed explicitly so each
        // product has T rows (a matMul with only dh rows runs several times slower).
        return [tf.matMul(dS, block(c.kr, i, [length, dh])), tf.matMul(transpose2d(dS), block(c.qr, i, [length, dh])), tf.matMul(transpose2d(p), dO)];
      });
      dq.push(a);
      dk.push(b);
      dv.push(d);
    }
    return { dQr: stackBlocks(dq), dKr: stackBlocks(dk), dV: stackBlocks(dv) };
  }

  private layerForward(
    w: LayerWeights,
    x: tf.Tensor,
    rows: number,
    length: number,
    keep: boolean,
  ): { out: tf.Tensor; cache: LayerCache | null; k: tf.Tensor; v: tf.Tensor } {
    const { H, D } = this;
    const eps = this.config.rmsNormEps;
    const tables = this.tablesFor(length);
    const BH = rows * H;
    const keepProbs = keep && BH * length * length * this.config.numLayers <= KEEP_PROBS_MAX_FLOATS;
    return scoped(() => {
      const n1 = rmsNorm(x, w.inputNorm, eps);
      const [q, k, v] = this.splitHeads(tf.matMul(n1.y, w.qkvF), rows, length);
      const qr = this.rope(q, tables.cosQ, tables.sinQ);
      const kr = this.rope(k, tables.cos, tables.sin);
      const { heads, probs } = this.attention(qr, kr, v, tables.mask, keepProbs);
      const o = tf.reshape(tf.transpose(tf.reshape(heads, [rows, H, length, this.dh]), [0, 2, 1, 3]), [rows * length, D]);
      const x1 = tf.add(x, tf.matMul(o, w.oF));
      const n2 = rmsNorm(x1, w.postNorm, eps);
      const gate = tf.matMul(n2.y, w.gateF);
      const up = tf.matMul(n2.y, w.upF);
      const sig = tf.sigmoid(gate);
      const silu = tf.mul(gate, sig);
      const act = tf.mul(silu, up);
      const out = tf.add(x1, tf.matMul(act, w.downF));
      const cache: LayerCache | null = keep ? { u1: n1.u, r1: n1.r, xn1: n1.y, qr, kr, v, probs, o, u2: n2.u, r2: n2.r, xn2: n2.y, up, sig, silu, act } : null;
      return { out, cache, k: kr, v };
    });
  }

  private layerBackward(w: LayerWeights, c: LayerCache, dOut: tf.Tensor, rows: number, length: number, prefix: string, grads: RawGradients): tf.Tensor {
    const { H, D, dh } = this;
    const BH = rows * H;
    const N = rows * length;
    const tables = this.tablesFor(length);
    const result = tf.tidy(() => {
      // MLP: out = x1 + act·downF, act = silu(gate) ⊙ up.
      const dAct = tf.matMul(dOut, w.downB);
      const gDown = tf.matMul(transpose2d(dOut), c.act);
      const dUp = tf.mul(dAct, c.silu);
      // silu'(g) = σ(g) + silu(g)·(1 − σ(g))
      const dGate = tf.mul(tf.mul(dAct, c.up), tf.add(c.sig, tf.mul(c.silu, tf.sub(1, c.sig))));
      const dXn2 = tf.add(tf.matMul(dGate, w.gateB), tf.matMul(dUp, w.upB));
      const xn2T = transpose2d(c.xn2);
      const gGate = tf.matMul(xn2T, dGate);
      const gUp = tf.matMul(xn2T, dUp);
      const n2 = rmsNormBackward(dXn2, c.u2, c.r2, w.postNorm);
      const dX1 = tf.add(dOut, n2.dx);

      // Attention output projection.
      const dO = tf.matMul(dX1, w.oB);
      const gO = tf.matMul(transpose2d(dX1), c.o);
      const dHeads = tf.reshape(tf.transpose(tf.reshape(dO, [rows, length, H, dh]), [0, 2, 1, 3]), [BH, length, dh]);
      const { dQr, dKr, dV } = this.attentionBackward(c, dHeads, tables.mask);
      const dQ = this.ropeBackward(dQr, tables.cosQ, tables.sinQ);
      const dK = this.ropeBackward(dKr, tables.cos, tables.sin);
      const dQkvHeads = tf.reshape(stackBlocks([dQ, dK, dV]), [3 * rows, H, length, dh]);
      const dQkv = tf.reshape(tf.transpose(tf.reshape(tf.transpose(dQkvHeads, [0, 2, 1, 3]), [3, rows, length, D]), [1, 2, 0, 3]), [N, 3 * D]);
      const dXn1 = tf.matMul(dQkv, w.qkvB);
      const gQkv = tf.matMul(transpose2d(c.xn1), dQkv);
      const n1 = rmsNormBackward(dXn1, c.u1, c.r1, w.inputNorm);
      const dX = tf.add(dX1, n1.dx);
      return { dX, gDown, gGate, gUp, gO, gQkv, gPost: n2.dw, gInput: n1.dw };
    });
    grads.set(`${prefix}.qkvF`, result.gQkv);
    grads.set(`${prefix}.o`, result.gO);
    grads.set(`${prefix}.gateF`, result.gGate);
    grads.set(`${prefix}.upF`, result.gUp);
    grads.set(`${prefix}.down`, result.gDown);
    grads.set(`${prefix}.inputNorm`, result.gInput);
    grads.set(`${prefix}.postNorm`, result.gPost);
    return result.dX;
  }

  /** Scores of every position of `batch`, without keeping anything for a backward pass. */
  score(weights: DeviceWeights, batch: SequenceBatch): TokenScores {
    const pass = this.forward(weights, batch, false);
    const scores = pass.scores;
    pass.dispose();
    return scores;
  }

  /** Next-token logits (of z / temperature) of every position of `batch`, [rows · length, V] row-major. */
  logits(weights: DeviceWeights, batch: SequenceBatch): Float32Array {
    const pass = this.forward(weights, batch, false);
    try {
      return heapView(pass.head.logits).slice();
    } finally {
      pass.dispose();
    }
  }

  /** Forward pass that keeps the activations the backward pass needs. */
  forwardTrain(weights: DeviceWeights, batch: SequenceBatch): TrainPass {
    return this.forward(weights, batch, true);
  }

  private forward(weights: DeviceWeights, batch: SequenceBatch, keep: boolean): TrainPass {
    const { rows, length } = batch;
    const layers: LayerCache[] = [];
    let x = this.embed(weights, batch.tokens);
    for (const w of weights.layers) {
      const { out, cache, k, v } = this.layerForward(w, x, rows, length, keep);
      if (cache) layers.push(cache);
      else {
        k.dispose();
        v.dispose();
      }
      x.dispose();
      x = out;
    }
    const head = tf.tidy(() => {
      const n = rmsNorm(x, weights.finalNorm, this.config.rmsNormEps);
      const raw = tf.matMul(n.y, weights.embedT);
      const logits = inverseTemperature(batch) === 1 ? raw : tf.mul(raw, inverseTemperature(batch));
      const probs = tf.softmax(logits);
      return { uf: n.u, rf: n.r, hf: n.y, logits, probs, meanLogit: tf.sum(tf.mul(probs, logits), 1) };
    });
    x.dispose();
    const scores = readScores(head, batch.targets, this.config.vocabSize);
    return new TrainPass(this, weights, batch, layers, head, scores);
  }

  /** @internal Run the backward pass of `pass` given ∂L/∂logprob and ∂L/∂entropy per position. */
  backward(pass: TrainPass, dLogprob: Float32Array, dEntropy: Float32Array | null): RawGradients {
    const { weights, batch, head } = pass;
    const { rows, length } = batch;
    const V = this.config.vocabSize;
    const N = rows * length;
    const grads: RawGradients = new Map();
    // ∂L/∂z_j = gLp·(δ_jt − p_j) − gH·p_j·(z_j − Σ p z): a scaled softmax plus a one-hot term.
    const dLogits = tf.tidy(() => {
      const gLp = tensorFrom(dLogprob, [N, 1]);
      if (!dEntropy || dEntropy.every((g) => g === 0)) return tf.mul(head.probs, tf.neg(gLp));
      const gH = tensorFrom(dEntropy, [N, 1]);
      const offset = tf.sub(tf.mul(gH, tf.reshape(head.meanLogit, [N, 1])), gLp);
      return tf.mul(head.probs, tf.sub(offset, tf.mul(head.logits, gH)));
    });
    const view = heapView(dLogits);
    for (let i = 0; i < N; i++) view[i * V + batch.targets[i]!]! += dLogprob[i]!;
    // The scores are of z/T: ∂/∂z = (1/T)·∂/∂(z/T).
    const inv = inverseTemperature(batch);
    if (inv !== 1) for (let i = 0; i < view.length; i++) view[i]! *= inv;
    let dX = tf.tidy(() => {
      grads.set("embedT", tf.keep(tf.matMul(transpose2d(head.hf), dLogits)));
      const n = rmsNormBackward(tf.matMul(dLogits, weights.embed), head.uf, head.rf, weights.finalNorm);
      grads.set("finalNorm", tf.keep(n.dw));
      return n.dx;
    });
    dLogits.dispose();
    for (let l = this.config.numLayers - 1; l >= 0; l--) {
      const next = this.layerBackward(weights.layers[l]!, pass.layers[l]!, dX, rows, length, `layer${l}`, grads);
      dX.dispose();
      dX = next;
    }
    grads.set("embedRows", dX);
    return grads;
  }

  /**
   * Prompt processing for generation: the rotated keys and values of every layer, laid out
   * [rows, heads, length, dh], and the next-token logits at `positions[r]` of each row.
   */
  prefill(
    weights: DeviceWeights,
    tokens: Int32Array,
    rows: number,
    length: number,
    positions: readonly number[],
  ): { keys: Float32Array[]; values: Float32Array[]; logits: Float32Array } {
    const keys: Float32Array[] = [];
    const values: Float32Array[] = [];
    let x = this.embed(weights, tokens);
    for (const w of weights.layers) {
      const { out, k, v } = this.layerForward(w, x, rows, length, false);
      keys.push(k.dataSync() as Float32Array);
      values.push(v.dataSync() as Float32Array);
      k.dispose();
      v.dispose();
      x.dispose();
      x = out;
    }
    const D = this.D;
    const last = new Float32Array(rows * D);
    const hidden = heapView(x);
    positions.forEach((p, r) => last.set(hidden.subarray((r * length + p) * D, (r * length + p + 1) * D), r * D));
    x.dispose();
    const logits = tf.tidy(() => {
      const h = rmsNorm(tensorFrom(last, [rows, D]), weights.finalNorm, this.config.rmsNormEps).y;
      return tf.matMul(h, weights.embedT);
    });
    const out = logits.dataSync() as Float32Array;
    logits.dispose();
    return { keys, values, logits: out };
  }
}

/** The activations of one forward pass, released by `dispose()` (or by `backward`). */
export class TrainPass {
  constructor(
    private readonly model: Transformer,
    readonly weights: DeviceWeights,
    readonly batch: SequenceBatch,
    readonly layers: LayerCache[],
    readonly head: HeadCache,
    readonly scores: TokenScores,
  ) {}

  /** Backpropagate ∂L/∂logprob (and ∂L/∂entropy) per position; releases the activations. */
  backward(dLogprob: Float32Array, dEntropy: Float32Array | null): RawGradients {
    try {
      return this.model.backward(this, dLogprob, dEntropy);
    } finally {
      this.dispose();
    }
  }

  dispose(): void {
    for (const layer of this.layers) {
      for (const value of Object.values(layer) as (tf.Tensor | tf.Tensor[])[]) {
        if (Array.isArray(value)) for (const t of value) t.dispose();
        else value.dispose();
      }
    }
    this.layers.length = 0;
    for (const t of Object.values(this.head) as tf.Tensor[]) t.dispose();
  }
}

function inverseTemperature(batch: SequenceBatch): number {
  return 1 / (batch.temperature ?? 1);
}
