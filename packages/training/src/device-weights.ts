import type * as tf from "@tensorflow/tfjs-core";
import type { TinyModelConfig } from "./config.js";
import { EMBED, FINAL_NORM, layerNames, type Parameters } from "./parameters.js";
import { tensorFrom, transpose2d } from "./wasm.js";

/** One block's weights on the wasm heap, in the two layouts the forward and backward passes multiply by. */
export interface LayerWeights {
  inputNorm: tf.Tensor;
  postNorm: tf.Tensor;
  /** [D, 3D]: x·qkvF gives q, k and v side by side. */
  qkvF: tf.Tensor;
  /** [3D, D]: the q, k and v projections stacked in Hugging Face [out, in] layout, for dx = dqkv·qkvB. */
  qkvB: tf.Tensor;
  oF: tf.Tensor;
  oB: tf.Tensor;
  gateF: tf.Tensor;
  gateB: tf.Tensor;
  upF: tf.Tensor;
  upB: tf.Tensor;
  downF: tf.Tensor;
  downB: tf.Tensor;
}

/**
 * The model's weights as tfjs tensors, built from host parameters once per optimizer step (the
 * weights do not change between steps, so the transposed copies are paid for once).
 */
export interface DeviceWeights {
  config: TinyModelConfig;
  /** Host copy of the embedding, for row lookups in JavaScript (tfjs-wasm's gather is slow). */
  embedHost: Float32Array;
  embed: tf.Tensor;
  embedT: tf.Tensor;
  finalNorm: tf.Tensor;
  layers: LayerWeights[];
}

export function uploadWeights(config: TinyModelConfig, params: Parameters): DeviceWeights {
  const D = config.hiddenSize;
  const F = config.intermediateSize;
  const get = (name: string): Float32Array => {
    const data = params.get(name);
    if (!data) throw new Error(`missing parameter ${name}`);
    return data;
  };
  const matrix = (name: string, rows: number, cols: number) => tensorFrom(get(name), [rows, cols]);
  const vector = (name: string) => tensorFrom(get(name), [get(name).length]);
  const embedHost = get(EMBED).slice();
  const embed = tensorFrom(embedHost, [config.vocabSize, D]);
  const layers: LayerWeights[] = [];
  for (let i = 0; i < config.numLayers; i++) {
    const n = layerNames(i);
    const qkv = new Float32Array(3 * D * D);
    qkv.set(get(n.q), 0);
    qkv.set(get(n.k), D * D);
    qkv.set(get(n.v), 2 * D * D);
    const qkvB = tensorFrom(qkv, [3 * D, D]);
    const oB = matrix(n.o, D, D);
    const gateB = matrix(n.gate, F, D);
    const upB = matrix(n.up, F, D);
    const downB = matrix(n.down, D, F);
    layers.push({
      inputNorm: vector(n.inputNorm),
      postNorm: vector(n.postNorm),
      qkvB,
      qkvF: transpose2d(qkvB),
      oB,
      oF: transpose2d(oB),
      gateB,
      gateF: transpose2d(gateB),
      upB,
      upF: transpose2d(upB),
      downB,
      downF: transpose2d(downB),
    });
  }
  return { config, embedHost, embed, embedT: transpose2d(embed), finalNorm: vector(FINAL_NORM), layers };
}

export function disposeWeights(weights: DeviceWeights): void {
  weights.embed.dispose();
  weights.embedT.dispose();
  weights.finalNorm.dispose();
  for (const layer of weights.layers) for (const t of Object.values(layer) as tf.Tensor[]) t.dispose();
}
