import { CheckpointError } from "./errors.js";
import type { TinyModelConfig } from "./config.js";
import { llamaTensorNames } from "./llama-config.js";
import { Rng } from "./rng.js";

/** Model parameters by Hugging Face name, each a float32 array in Hugging Face layout. */
export type Parameters = Map<string, Float32Array>;

export interface ParameterSpec {
  name: string;
  /** Hugging Face layout: linear weights are `[out, in]` (y = x·Wᵀ), embeddings `[vocab, hidden]`. */
  shape: number[];
  init: "normal" | "residual" | "ones";
}

export const EMBED = llamaTensorNames.embed;
export const FINAL_NORM = llamaTensorNames.norm;

/** The names of one block's parameters. */
export function layerNames(i: number) {
  const names = llamaTensorNames;
  return {
    inputNorm: names.inputNorm(i),
    q: names.q(i),
    k: names.k(i),
    v: names.v(i),
    o: names.o(i),
    postNorm: names.postNorm(i),
    gate: names.gate(i),
    up: names.up(i),
    down: names.down(i),
  };
}

/** Every parameter of the model, in checkpoint order. */
export function parameterSpecs(config: TinyModelConfig): ParameterSpec[] {
  const D = config.hiddenSize;
  const F = config.intermediateSize;
  const specs: ParameterSpec[] = [{ name: EMBED, shape: [config.vocabSize, D], init: "normal" }];
  for (let i = 0; i < config.numLayers; i++) {
    const n = layerNames(i);
    specs.push(
      { name: n.inputNorm, shape: [D], init: "ones" },
      { name: n.q, shape: [D, D], init: "normal" },
      { name: n.k, shape: [D, D], init: "normal" },
      { name: n.v, shape: [D, D], init: "normal" },
      { name: n.o, shape: [D, D], init: "residual" },
      { name: n.postNorm, shape: [D], init: "ones" },
      { name: n.gate, shape: [F, D], init: "normal" },
      { name: n.up, shape: [F, D], init: "normal" },
      { name: n.down, shape: [D, F], init: "residual" },
    );
  }
  specs.push({ name: FINAL_NORM, shape: [D], init: "ones" });
  return specs;
}

export function countParameters(config: TinyModelConfig): number {
  return parameterSpecs(config).reduce((sum, spec) => sum + spec.shape.reduce((a, b) => a * b, 1), 0);
}

/**
 * Fresh parameters: normal(0, initializerRange) weights, with the two projections that write
 * into the residual stream (o_proj, down_proj) scaled by 1/√(2·layers) so the stream's variance
 * does not grow with depth; norm weights start at one.
 */
export function initParameters(config: TinyModelConfig, seed: number): Parameters {
  const rng = Rng.fromSeed(seed);
  const params: Parameters = new Map();
  const residualStd = config.initializerRange / Math.sqrt(2 * config.numLayers);
  for (const spec of parameterSpecs(config)) {
    const data = new Float32Array(spec.shape.reduce((a, b) => a * b, 1));
    if (spec.init === "ones") data.fill(1);
    else {
      const std = spec.init === "residual" ? residualStd : config.initializerRange;
      for (let i = 0; i < data.length; i++) data[i] = rng.normal() * std;
    }
    params.set(spec.name, data);
  }
  return params;
}

/** Check that `params` holds exactly the model's parameters with the right sizes. */
export function checkParameters(config: TinyModelConfig, params: ReadonlyMap<string, { data: Float32Array; shape?: number[] }>, file: string): void {
  const problems: string[] = [];
  const specs = parameterSpecs(config);
  for (const spec of specs) {
    const tensor = params.get(spec.name);
    if (!tensor) {
      problems.push(`missing ${spec.name}`);
      continue;
    }
    const size = spec.shape.reduce((a, b) => a * b, 1);
    const shapeOk = tensor.shape === undefined || (tensor.shape.length === spec.shape.length && tensor.shape.every((d, i) => d === spec.shape[i]));
    if (!shapeOk || tensor.data.length !== size) {
      problems.push(`${spec.name} has shape [${(tensor.shape ?? [tensor.data.length]).join(", ")}], expected [${spec.shape.join(", ")}]`);
    }
  }
  const known = new Set(specs.map((s) => s.name));
  for (const name of params.keys()) if (!known.has(name)) problems.push(`unexpected tensor ${name}`);
  if (problems.length > 0) throw new CheckpointError(`${file}: ${problems.join("; ")}`);
}
