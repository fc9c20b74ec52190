import { InvariantError } from "@envace/errors";
import type * as tf from "@tensorflow/tfjs-core";
import type { TinyModelConfig } from "./config.js";
import { transposeHost } from "./host-math.js";
import { EMBED, FINAL_NORM, layerNames, type Parameters } from "./parameters.js";
import { tensorFrom, transpose2d } from "./wasm.js";

/**
 * Parameters on the wasm heap, keyed by device name, each in the layout its gradient comes out of
 * the backward pass (so the optimizer needs no transposes):
 *
 * - `embed` [V, D] and `layer{i}.o` [D, D], `layer{i}.down` [D, F]: Hugging Face layout;
 * - `layer{i}.qkvF` [D, 3D]: the q, k, v projections transposed and side by side;
 * - `layer{i}.gateF`, `layer{i}.upF` [D, F]: transposed;
 * - norm gains as they are.
 */
export type DeviceParameters = Map<string, tf.Tensor>;

export function deviceLayerNames(i: number) {
  const p = `layer${i}`;
  return {
    inputNorm: `${p}.inputNorm`,
    qkv: `${p}.qkvF`,
    o: `${p}.o`,
    postNorm: `${p}.postNorm`,
    gate: `${p}.gateF`,
    up: `${p}.upF`,
    down: `${p}.down`,
  };
}

export const DEVICE_EMBED = "embed";
export const DEVICE_FINAL_NORM = "finalNorm";

/** Whether AdamW's weight decay applies: to matrices and the embedding, not to norm gains. */
export function decays(name: string): boolean {
  return !name.endsWith("Norm");
}

/** Host parameters (Hugging Face names and layout) to the device layout. */
export function toDevice(config: TinyModelConfig, host: Parameters): DeviceParameters {
  const D = config.hiddenSize;
  const F = config.intermediateSize;
  const get = (name: string): Float32Array => {
    const data = host.get(name);
    if (!data) throw new InvariantError(`missing parameter ${name}`);
    return data;
  };
  const out: DeviceParameters = new Map();
  out.set(DEVICE_EMBED, tensorFrom(get(EMBED), [config.vocabSize, D]));
  for (let i = 0; i < config.numLayers; i++) {
    const n = layerNames(i);
    const d = deviceLayerNames(i);
    const qkv = new Float32Array(3 * D * D);
    qkv.set(get(n.q), 0);
    qkv.set(get(n.k), D * D);
    qkv.set(get(n.v), 2 * D * D);
    out.set(d.inputNorm, tensorFrom(get(n.inputNorm), [D]));
    out.set(d.qkv, tensorFrom(transposeHost(qkv, 3 * D, D), [D, 3 * D]));
    out.set(d.o, tensorFrom(get(n.o), [D, D]));
    out.set(d.postNorm, tensorFrom(get(n.postNorm), [D]));
    out.set(d.gate, tensorFrom(transposeHost(get(n.gate), F, D), [D, F]));
    out.set(d.up, tensorFrom(transposeHost(get(n.up), F, D), [D, F]));
    out.set(d.down, tensorFrom(get(n.down), [D, F]));
  }
  out.set(DEVICE_FINAL_NORM, tensorFrom(get(FINAL_NORM), [D]));
  return out;
}

/** Device parameters (or anything in their layout: gradients, optimizer moments) to Hugging Face names and layout. */
export function toHost(config: TinyModelConfig, device: ReadonlyMap<string, tf.Tensor>): Parameters {
  const D = config.hiddenSize;
  const F = config.intermediateSize;
  const read = (name: string): Float32Array => {
    const t = device.get(name);
    if (!t) throw new InvariantError(`missing device tensor ${name}`);
    return t.dataSync() as Float32Array;
  };
  const out: Parameters = new Map();
  out.set(EMBED, read(DEVICE_EMBED));
  for (let i = 0; i < config.numLayers; i++) {
    const n = layerNames(i);
    const d = deviceLayerNames(i);
    const qkv = transposeHost(read(d.qkv), D, 3 * D);
    out.set(n.inputNorm, read(d.inputNorm));
    out.set(n.q, qkv.slice(0, D * D));
    out.set(n.k, qkv.slice(D * D, 2 * D * D));
    out.set(n.v, qkv.slice(2 * D * D));
    out.set(n.o, read(d.o));
    out.set(n.postNorm, read(d.postNorm));
    out.set(n.gate, transposeHost(read(d.gate), D, F));
    out.set(n.up, transposeHost(read(d.up), D, F));
    out.set(n.down, read(d.down));
  }
  out.set(FINAL_NORM, read(DEVICE_FINAL_NORM));
  return out;
}

/** One block's weights in the two layouts the forward and backward passes multiply by. */
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
 * The weights as the passes use them, derived from device parameters once per optimizer step
 * (the weights do not change between steps, so the transposed copies are paid for once).
 */
export interface DeviceWeights {
  config: TinyModelConfig;
  /** Host copy of the embedding, for row lookups in JavaScript (tfjs-wasm's gather is slow). */
  embedHost: Float32Array;
  embed: tf.Tensor;
  embedT: tf.Tensor;
  finalNorm: tf.Tensor;
  layers: LayerWeights[];
  /** The tensors these weights created, which `disposeWeights` releases. */
  owned: tf.Tensor[];
}

/** Weights over `params` (which they share, not own) plus their transposed copies. */
export function deriveWeights(config: TinyModelConfig, params: DeviceParameters): DeviceWeights {
  const owned: tf.Tensor[] = [];
  const get = (name: string): tf.Tensor => {
    const t = params.get(name);
    if (!t) throw new InvariantError(`missing device tensor ${name}`);
    return t;
  };
  const transposed = (name: string): tf.Tensor => {
    const t = transpose2d(get(name));
    owned.push(t);
    return t;
  };
  const layers: LayerWeights[] = [];
  for (let i = 0; i < config.numLayers; i++) {
    const d = deviceLayerNames(i);
    layers.push({
      inputNorm: get(d.inputNorm),
      postNorm: get(d.postNorm),
      qkvF: get(d.qkv),
      qkvB: transposed(d.qkv),
      oF: transposed(d.o),
      oB: get(d.o),
      gateF: get(d.gate),
      gateB: transposed(d.gate),
      upF: get(d.up),
      upB: transposed(d.up),
      downF: transposed(d.down),
      downB: get(d.down),
    });
  }
  const embed = get(DEVICE_EMBED);
  return {
    config,
    embedHost: embed.dataSync() as Float32Array,
    embed,
    embedT: transposed(DEVICE_EMBED),
    finalNorm: get(DEVICE_FINAL_NORM),
    layers,
    owned,
  };
}

/** Weights built from host parameters, owning every tensor (for samplers). */
export function uploadWeights(config: TinyModelConfig, host: Parameters): DeviceWeights {
  const params = toDevice(config, host);
  const weights = deriveWeights(config, params);
  weights.owned.push(...params.values());
  return weights;
}

export function disposeWeights(weights: DeviceWeights): void {
  for (const t of weights.owned) t.dispose();
  weights.owned.length = 0;
}

export function disposeAll(tensors: ReadonlyMap<string, tf.Tensor>): void {
  for (const t of tensors.values()) t.dispose();
}
