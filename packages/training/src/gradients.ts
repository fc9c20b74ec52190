import * as tf from "@tensorflow/tfjs-core";
import type { TinyModelConfig } from "./config.js";
import { EMBED, FINAL_NORM, layerNames, type Parameters } from "./parameters.js";
import type { RawGradients } from "./transformer.js";

/**
 * Sums gradients across backward passes until the optimizer takes them. Most gradients stay on
 * the wasm heap in the layout the backward pass produced; the embedding rows' gradient (a
 * scatter-add by token id, which tfjs-wasm cannot differentiate) is added on the host.
 */
export class GradientAccumulator {
  private readonly device = new Map<string, tf.Tensor>();
  private embedRows: Float32Array | null = null;

  constructor(private readonly config: TinyModelConfig) {}

  get empty(): boolean {
    return this.device.size === 0 && this.embedRows === null;
  }

  add(grads: RawGradients, tokens: Int32Array): void {
    for (const [name, g] of grads) {
      if (name === "embedRows") {
        this.scatterRows(g, tokens);
        g.dispose();
        continue;
      }
      const prev = this.device.get(name);
      if (prev) {
        this.device.set(name, tf.add(prev, g));
        prev.dispose();
        g.dispose();
      } else {
        this.device.set(name, g);
      }
    }
  }

  private scatterRows(rowsGrad: tf.Tensor, tokens: Int32Array): void {
    const D = this.config.hiddenSize;
    const g = rowsGrad.dataSync();
    const acc = (this.embedRows ??= new Float32Array(this.config.vocabSize * D));
    for (let i = 0; i < tokens.length; i++) {
      const base = tokens[i]! * D;
      for (let j = 0; j < D; j++) acc[base + j]! += g[i * D + j]!;
    }
  }

  /** The accumulated gradients by parameter name in Hugging Face layout, and clear the accumulator. */
  take(): Parameters {
    const out = this.peek();
    this.clear();
    return out;
  }

  /** The accumulated gradients by parameter name in Hugging Face layout. */
  peek(): Parameters {
    const { hiddenSize: D, intermediateSize: F, vocabSize: V } = this.config;
    const host = (name: string): Float32Array => {
      const t = this.device.get(name);
      if (!t) throw new Error(`no accumulated gradient for ${name}`);
      return t.dataSync() as Float32Array;
    };
    const out: Parameters = new Map();
    const embed = transposeHost(host("embedT"), D, V);
    if (this.embedRows) for (let i = 0; i < embed.length; i++) embed[i]! += this.embedRows[i]!;
    out.set(EMBED, embed);
    for (let l = 0; l < this.config.numLayers; l++) {
      const n = layerNames(l);
      const p = `layer${l}`;
      const qkv = transposeHost(host(`${p}.qkvF`), D, 3 * D);
      out.set(n.inputNorm, host(`${p}.inputNorm`));
      out.set(n.q, qkv.subarray(0, D * D));
      out.set(n.k, qkv.subarray(D * D, 2 * D * D));
      out.set(n.v, qkv.subarray(2 * D * D));
      out.set(n.o, host(`${p}.o`));
      out.set(n.postNorm, host(`${p}.postNorm`));
      out.set(n.gate, transposeHost(host(`${p}.gateF`), D, F));
      out.set(n.up, transposeHost(host(`${p}.upF`), D, F));
      out.set(n.down, host(`${p}.down`));
    }
    out.set(FINAL_NORM, host("finalNorm"));
    return out;
  }

  clear(): void {
    for (const t of this.device.values()) t.dispose();
    this.device.clear();
    this.embedRows = null;
  }
}

/** The transpose of a row-major [rows, cols] matrix, blocked for cache locality. */
export function transposeHost(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  const B = 32;
  for (let i0 = 0; i0 < rows; i0 += B) {
    const i1 = Math.min(rows, i0 + B);
    for (let j0 = 0; j0 < cols; j0 += B) {
      const j1 = Math.min(cols, j0 + B);
      for (let i = i0; i < i1; i++) {
        for (let j = j0; j < j1; j++) out[j * rows + i] = data[i * cols + j]!;
      }
    }
  }
  return out;
}
