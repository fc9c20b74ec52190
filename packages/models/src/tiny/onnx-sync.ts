import { performance } from "node:perf_hooks";
import { expectedLlamaTensors, llamaShape, toHfConfig, type LlamaConfig, type NamedTensor, type TinyModelConfig } from "@envace/training";
import { OnnxCausalLM, type OnnxSessionOptions } from "../onnx/causal-lm.js";
import { llamaOnnxBytes } from "../onnx/export.js";
import { OnnxSampler, type OnnxSamplerOptions } from "../onnx/sampler.js";

/** What one weight sync cost. */
export interface WeightSyncTiming {
  /** Building the ONNX model bytes from the parameters. */
  exportMs: number;
  /** Creating the new onnxruntime session. */
  loadMs: number;
  totalMs: number;
  modelBytes: number;
}

/** Parameters by Hugging Face name (as the training package keeps them) with the shapes the config implies. */
function shapedWeights(config: LlamaConfig, params: ReadonlyMap<string, Float32Array>): Map<string, NamedTensor> {
  const weights = new Map<string, NamedTensor>();
  for (const [name, shape] of expectedLlamaTensors(llamaShape(config))) {
    const data = params.get(name);
    if (data) weights.set(name, { shape, data });
  }
  return weights;
}

/**
 * Rollouts of the in-process tiny model on onnxruntime with a KV cache, while tfjs takes the
 * gradient steps: after each optimizer step, `sync` rebuilds the ONNX model from the trainer's
 * parameters in memory and swaps the session (nothing touches the disk). Samples already running
 * finish on the old weights; later ones, and their prefix caches, use the new ones.
 */
export class TinyOnnxEngine {
  readonly config: LlamaConfig;
  readonly model: OnnxCausalLM;
  readonly sampler: OnnxSampler;
  /** Timing of every sync so far. */
  readonly syncs: WeightSyncTiming[] = [];

  private constructor(config: LlamaConfig, model: OnnxCausalLM, sampler: OnnxSampler) {
    this.config = config;
    this.model = model;
    this.sampler = sampler;
  }

  static async create(
    config: TinyModelConfig,
    params: ReadonlyMap<string, Float32Array>,
    options: OnnxSessionOptions & Partial<OnnxSamplerOptions> = {},
  ): Promise<TinyOnnxEngine> {
    const hf: LlamaConfig = toHfConfig(config);
    // A model this small spends more on waking threads than on arithmetic: one thread by default.
    const sessionOptions = { ...options, threads: options.threads ?? 1 };
    const model = await OnnxCausalLM.fromBytes(llamaOnnxBytes(hf, shapedWeights(hf, params), "tiny model parameters"), sessionOptions);
    const sampler = new OnnxSampler(model, {
      ...options,
      stopTokenIds: options.stopTokenIds ?? (config.eosTokenId !== null ? [config.eosTokenId] : []),
      maxContext: options.maxContext ?? config.maxPositionEmbeddings,
    });
    return new TinyOnnxEngine(hf, model, sampler);
  }

  /** Load new parameters into the session; returns (and records) what it cost. */
  async sync(params: ReadonlyMap<string, Float32Array>): Promise<WeightSyncTiming> {
    const start = performance.now();
    const bytes = llamaOnnxBytes(this.config, shapedWeights(this.config, params), "tiny model parameters");
    const built = performance.now();
    await this.model.replaceModel(bytes);
    const done = performance.now();
    const timing = { exportMs: built - start, loadMs: done - built, totalMs: done - start, modelBytes: bytes.byteLength };
    this.syncs.push(timing);
    return timing;
  }
}
