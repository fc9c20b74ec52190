import * as tf from "@tensorflow/tfjs-core";
import type { TinyModelConfig } from "./config.js";
import { DEVICE_EMBED, type DeviceParameters } from "./device-weights.js";
import type { RawGradients } from "./transformer.js";
import { tensorFrom, transpose2d } from "./wasm.js";

/**
 * Sums gradients across backward passes until the optimizer takes them, on the wasm heap in the
 * device layout of the parameters. The embedding's gradient has two parts: the logits' (a
 * matMul) and the input rows' (a scatter-add by token id, which tfjs-wasm cannot differentiate),
 * accumulated on the host and added when the gradients are taken.
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
      } else {
        this.accumulate(name, g);
      }
    }
  }

  /** Move everything `other` holds into this accumulator (adding), leaving `other` empty. */
  absorb(other: GradientAccumulator): void {
    for (const [name, g] of other.device) this.accumulate(name, g);
    other.device.clear();
    if (other.embedRows) {
      if (this.embedRows) for (let i = 0; i < this.embedRows.length; i++) this.embedRows[i]! += other.embedRows[i]!;
      else this.embedRows = other.embedRows;
      other.embedRows = null;
    }
  }

  private accumulate(name: string, g: tf.Tensor): void {
    const prev = this.device.get(name);
    if (prev) {
      this.device.set(name, tf.add(prev, g));
      prev.dispose();
      g.dispose();
    } else {
      this.device.set(name, g);
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

  /** The accumulated gradients (device names and layout; the caller owns them); clears the accumulator. */
  take(): DeviceParameters {
    const out = this.assemble(new Map(this.device));
    this.device.clear();
    this.embedRows = null;
    return out;
  }

  /** Copies of the accumulated gradients (device names and layout); the accumulator is unchanged. */
  peek(): DeviceParameters {
    return this.assemble(new Map([...this.device].map(([name, g]) => [name, tf.clone(g)])));
  }

  /** Turn the logits' embedding gradient [D, V] into [V, D] and add the rows' part (consumes `grads`). */
  private assemble(grads: Map<string, tf.Tensor>): DeviceParameters {
    const embedT = grads.get("embedT");
    if (!embedT) return grads;
    grads.delete("embedT");
    const embed = transpose2d(embedT);
    embedT.dispose();
    if (this.embedRows) {
      const rows = tensorFrom(this.embedRows, [this.config.vocabSize, this.config.hiddenSize]);
      grads.set(DEVICE_EMBED, tf.add(embed, rows));
      embed.dispose();
      rows.dispose();
    } else {
      grads.set(DEVICE_EMBED, embed);
    }
    return grads;
  }

  clear(): void {
    for (const t of this.device.values()) t.dispose();
    this.device.clear();
    this.embedRows = null;
  }
}
