import { TrainingInputError, TrainingStateError } from "./errors.js";
import { PolicyLossConfig } from "@envace/grpo";
import type { Tokenizer } from "@envace/protocol";
import { adamwStep, checkAdamParams, freshAdamState, type AdamState } from "./adamw.js";
import type { AdamParams, Datum, ForwardBackwardResult, LossFn, ScoringOptions, TrainingBackend } from "./backend.js";
import { loadCheckpoint, saveCheckpoint, type HostAdamState, type LoadOptions } from "./checkpoint.js";
import { TinyModelConfig, type TinyModelConfigInput } from "./config.js";
import { decays, deriveWeights, disposeAll, disposeWeights, toDevice, toHost, type DeviceParameters, type DeviceWeights } from "./device-weights.js";
import { GradientAccumulator } from "./gradients.js";
import { evaluateObjective, subsetFactor, type TokenScoresRow } from "./objective.js";
import { checkParameters, countParameters, initParameters, type Parameters } from "./parameters.js";
import { Rng } from "./rng.js";
import { TinySampler } from "./sampler.js";
import { ByteLevelBpeTokenizer } from "./tokenizer.js";
import { Transformer, type AttentionKernel, type SequenceBatch } from "./transformer.js";
import { initWasmBackend } from "./wasm.js";

/** A tokenizer that can also write itself as Hugging Face files (the built-in one can). */
export type CheckpointTokenizer = Tokenizer & { toHuggingFace?(): { tokenizerJson: unknown; tokenizerConfig: unknown } };

export interface InProcessBackendOptions {
  /** Seeds the initial weights and every random choice after (default 0). */
  seed?: number;
  /** Tokens (rows × padded length) per forward/backward micro-batch; bounds memory (default 2048). */
  microbatchTokens?: number;
  /** Saved with checkpoints, and used by samplers for stop tokens and stop strings. */
  tokenizer?: CheckpointTokenizer;
  /** Token ids that end a generation; default: the tokenizer's stop tokens, else the config's eos. */
  stopTokenIds?: readonly number[];
  /** How attention runs (default `auto`: batched for short sequences, per head for long ones). */
  attentionKernel?: AttentionKernel;
}

/**
 * The in-process training backend: the tiny transformer on tfjs-wasm (CPU), with Tinker's
 * semantics. `forwardBackward` adds the gradient of each call's loss to an accumulator (calls add
 * up, as on Tinker); `optimStep` applies AdamW and clears it. Calls run one at a time, in the order
 * they were made. Deterministic: the same seed and calls give bit-identical weights.
 */
export class InProcessBackend implements TrainingBackend {
  readonly config: TinyModelConfig;
  /** Weights and optimizer state live on the wasm heap; the optimizer step never leaves it. */
  private readonly params: DeviceParameters;
  private readonly adam: AdamState;
  private rng: Rng;
  private readonly model: Transformer;
  private readonly grads: GradientAccumulator;
  private device: DeviceWeights | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly microbatchTokens: number;
  /** The tokenizer given at creation or read from the checkpoint, if any. */
  readonly tokenizer: CheckpointTokenizer | undefined;
  private readonly stopTokenIds: readonly number[] | undefined;

  private constructor(config: TinyModelConfig, params: Parameters, adam: HostAdamState | null, rng: Rng, options: InProcessBackendOptions) {
    this.config = config;
    this.params = toDevice(config, params);
    this.adam = adam ? { step: adam.step, m: toDevice(config, adam.m), v: toDevice(config, adam.v) } : freshAdamState(this.params);
    this.rng = rng;
    this.model = new Transformer(config, options.attentionKernel);
    this.grads = new GradientAccumulator(config);
    this.microbatchTokens = options.microbatchTokens ?? 2048;
    if (!(Number.isInteger(this.microbatchTokens) && this.microbatchTokens > 0)) {
      throw new TrainingInputError(`microbatchTokens must be a positive integer, got ${options.microbatchTokens}`);
    }
    this.tokenizer = options.tokenizer;
    this.stopTokenIds = options.stopTokenIds ?? options.tokenizer?.stopTokenIds;
    if (options.tokenizer && options.tokenizer.vocabSize > config.vocabSize) {
      throw new TrainingInputError(`the tokenizer has ${options.tokenizer.vocabSize} tokens but the model's vocabSize is ${config.vocabSize}`);
    }
  }

  /** A freshly initialised model. */
  static async create(config: TinyModelConfigInput, options: InProcessBackendOptions = {}): Promise<InProcessBackend> {
    await initWasmBackend();
    const parsed = TinyModelConfig.parse(config);
    const seed = options.seed ?? 0;
    const params = initParameters(parsed, seed);
    return new InProcessBackend(parsed, params, null, Rng.fromSeed(seed).fork(), options);
  }

  /** A backend over given weights (Hugging Face names and layout), with a fresh optimizer. */
  static async fromParameters(
    config: TinyModelConfigInput,
    params: ReadonlyMap<string, Float32Array>,
    options: InProcessBackendOptions = {},
  ): Promise<InProcessBackend> {
    await initWasmBackend();
    const parsed = TinyModelConfig.parse(config);
    checkParameters(parsed, new Map([...params].map(([name, data]) => [name, { data }])), "parameters");
    return new InProcessBackend(parsed, new Map(params), null, Rng.fromSeed(options.seed ?? 0).fork(), options);
  }

  /** Resume from a checkpoint folder (weights, and optimizer and generator state unless `optimizer: false`). */
  static async load(dir: string, options: InProcessBackendOptions & LoadOptions = {}): Promise<InProcessBackend> {
    await initWasmBackend();
    const contents = await loadCheckpoint(dir, options);
    const rng = contents.rngState ? Rng.fromState(contents.rngState) : Rng.fromSeed(options.seed ?? 0).fork();
    const tokenizer =
      options.tokenizer ??
      (contents.tokenizer ? ByteLevelBpeTokenizer.fromHuggingFace(contents.tokenizer.tokenizerJson, contents.tokenizer.tokenizerConfig, dir) : undefined);
    return new InProcessBackend(contents.config, contents.params, contents.adam, rng, { ...options, ...(tokenizer ? { tokenizer } : {}) });
  }

  /** Number of optimizer steps taken. */
  get optimizerStep(): number {
    return this.adam.step;
  }

  get parameterCount(): number {
    return countParameters(this.config);
  }

  /** A copy of the current weights (Hugging Face names and layout). */
  parameters(): Parameters {
    return toHost(this.config, this.params);
  }

  /**
   * The gradients accumulated since the last optimizer step (Hugging Face names and layout), or
   * null when there are none. For inspection; the accumulator is left as it is.
   */
  accumulatedGradients(): Promise<Parameters | null> {
    return this.exclusive(() => {
      if (this.grads.empty) return null;
      const grads = this.grads.peek();
      const host = toHost(this.config, grads);
      disposeAll(grads);
      return host;
    });
  }

  forwardBackward(data: Datum[], loss: LossFn, options: ScoringOptions = {}): Promise<ForwardBackwardResult> {
    return this.exclusive(async () => {
      checkLoss(loss);
      const temperature = checkTemperature(options);
      data.forEach((d, i) => {
        checkDatum(d, i, this.config, true);
      });
      if (loss.type === "grpo" && loss.config.klCoef > 0) {
        const missing = data.findIndex((d) => d.refLogprobs === undefined);
        if (missing >= 0) throw new TrainingInputError(`data[${missing}] has no refLogprobs, which the KL term (klCoef ${loss.config.klCoef}) needs`);
      }
      const weights = this.weights();
      const scores: TokenScoresRow[] = new Array<TokenScoresRow>(data.length);
      // This call's gradients join the accumulator only once the whole call has succeeded.
      const callGrads = new GradientAccumulator(this.config);
      try {
        for (const group of this.microbatches(data)) {
          const batch = packBatch(data, group, temperature);
          const part = this.trainMicrobatch(weights, batch, group, data, loss, callGrads);
          group.forEach((i, k) => (scores[i] = part[k]!));
          await yieldToEventLoop();
        }
        const objective = evaluateObjective(loss, data, scores);
        this.grads.absorb(callGrads);
        return { logprobs: scores.map((s) => Array.from(s.logprobs)), loss: objective.loss, metrics: objective.metrics };
      } finally {
        callGrads.clear();
      }
    });
  }

  /** Forward, loss gradient and backward for one micro-batch; returns the scores of its rows. */
  private trainMicrobatch(
    weights: DeviceWeights,
    batch: SequenceBatch,
    group: readonly number[],
    data: readonly Datum[],
    loss: LossFn,
    grads: GradientAccumulator,
  ): TokenScoresRow[] {
    const pass = this.model.forwardTrain(weights, batch);
    try {
      const part = group.map((i, k) => rowScores(pass.scores, batch, k, data[i]!.tokens.length));
      const objective = evaluateObjective(
        loss,
        group.map((i) => data[i]!),
        part,
      );
      const factor = subsetFactor(loss, data, group);
      const dLogprob = spread(objective.gradLogprobs, batch, factor);
      const dEntropy = objective.gradEntropy ? spread(objective.gradEntropy, batch, factor) : null;
      grads.add(pass.backward(dLogprob, dEntropy), batch.tokens);
      return part;
    } finally {
      pass.dispose();
    }
  }

  forward(data: Datum[], options: ScoringOptions = {}): Promise<number[][]> {
    return this.exclusive(async () => {
      const temperature = checkTemperature(options);
      data.forEach((d, i) => {
        checkDatum(d, i, this.config, false);
      });
      const weights = this.weights();
      const out: number[][] = new Array<number[]>(data.length);
      for (const group of this.microbatches(data)) {
        const batch = packBatch(data, group, temperature);
        const scores = this.model.score(weights, batch);
        group.forEach((i, k) => (out[i] = Array.from(rowScores(scores, batch, k, data[i]!.tokens.length).logprobs)));
        await yieldToEventLoop();
      }
      return out;
    });
  }

  optimStep(adam: AdamParams): Promise<Record<string, number>> {
    return this.exclusive(() => {
      checkAdamParams(adam);
      if (this.grads.empty) return { "grad_norm:mean": 0, "skipped:max": 1, "step:max": this.adam.step };
      const grads = this.grads.take();
      try {
        this.invalidate();
        return adamwStep(this.params, grads, this.adam, adam, decays);
      } finally {
        disposeAll(grads);
      }
    });
  }

  /** A sampler over a snapshot of the current weights; training on does not change it. */
  saveWeightsForSampler(name?: string): Promise<TinySampler> {
    return this.exclusive(
      () =>
        new TinySampler(this.config, toHost(this.config, this.params), {
          name: name ?? `step-${this.adam.step}`,
          seed: this.rng.nextUint32(),
          ...(this.tokenizer ? { tokenizer: this.tokenizer } : {}),
          ...(this.stopTokenIds ? { stopTokenIds: this.stopTokenIds } : {}),
        }),
    );
  }

  /**
   * Write weights, optimizer state and generator state to `dir` (see `saveCheckpoint`). Only
   * between optimizer steps: gradients accumulated since the last step are not saved.
   */
  saveCheckpoint(dir: string): Promise<void> {
    return this.exclusive(async () => {
      if (!this.grads.empty) {
        throw new TrainingStateError("gradients have been accumulated since the last optimStep; checkpoint between steps (after optimStep)");
      }
      await saveCheckpoint(dir, {
        config: this.config,
        params: toHost(this.config, this.params),
        adam: { step: this.adam.step, m: toHost(this.config, this.adam.m), v: toHost(this.config, this.adam.v) },
        rngState: this.rng.state(),
        tokenizer: this.tokenizer?.toHuggingFace?.(),
      });
    });
  }

  /** Release the tensors this backend holds on the wasm heap. */
  dispose(): void {
    this.invalidate();
    this.grads.clear();
    this.model.dispose();
    disposeAll(this.params);
    disposeAll(this.adam.m);
    disposeAll(this.adam.v);
  }

  private weights(): DeviceWeights {
    return (this.device ??= deriveWeights(this.config, this.params));
  }

  private invalidate(): void {
    if (this.device) disposeWeights(this.device);
    this.device = null;
  }

  private exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Data indices grouped into micro-batches of similar length, longest first. */
  private microbatches(data: readonly Datum[]): number[][] {
    const order = data.map((_, i) => i).sort((a, b) => data[b]!.tokens.length - data[a]!.tokens.length || a - b);
    const groups: number[][] = [];
    let current: number[] = [];
    let length = 0;
    for (const i of order) {
      if (current.length > 0 && (current.length + 1) * length > this.microbatchTokens) {
        groups.push(current);
        current = [];
      }
      if (current.length === 0) length = paddedLength(data[i]!.tokens.length);
      current.push(i);
    }
    if (current.length > 0) groups.push(current);
    return groups;
  }
}

/** `InProcessBackend.create`: a new tiny transformer with its training backend. */
export function createTinyModel(config: TinyModelConfigInput, options: InProcessBackendOptions = {}): Promise<InProcessBackend> {
  return InProcessBackend.create(config, options);
}

/** Sequences are padded to a multiple of 8 positions so the fast transposes apply. */
function paddedLength(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/** The scoring temperature; 0 (greedy sampling) has no distribution to score. */
function checkTemperature(options: ScoringOptions): number {
  const temperature = options.temperature ?? 1;
  if (!(temperature > 0 && Number.isFinite(temperature)))
    throw new TrainingInputError(`cannot score at temperature ${temperature}: it must be a positive number`);
  return temperature;
}

function packBatch(data: readonly Datum[], group: readonly number[], temperature: number): SequenceBatch {
  const length = paddedLength(Math.max(...group.map((i) => data[i]!.tokens.length)));
  const tokens = new Int32Array(group.length * length);
  const targets = new Int32Array(group.length * length);
  group.forEach((i, r) => {
    tokens.set(data[i]!.tokens, r * length);
    targets.set(data[i]!.targetTokens, r * length);
  });
  return { rows: group.length, length, tokens, targets, temperature };
}

function rowScores(scores: { logprobs: Float32Array; entropies: Float32Array }, batch: SequenceBatch, row: number, n: number): TokenScoresRow {
  const at = row * batch.length;
  return { logprobs: scores.logprobs.subarray(at, at + n), entropies: scores.entropies.subarray(at, at + n) };
}

/** Per-row gradients laid out over the padded batch (zeros at padding), times `factor`. */
function spread(rows: readonly (readonly number[])[], batch: SequenceBatch, factor: number): Float32Array {
  const out = new Float32Array(batch.rows * batch.length);
  rows.forEach((row, r) => {
    row.forEach((g, t) => (out[r * batch.length + t] = g * factor));
  });
  return out;
}

function checkLoss(loss: LossFn): void {
  switch (loss.type) {
    case "cross_entropy":
    case "importance_sampling":
      return;
    case "ppo":
    case "cispo":
      if (!(loss.clipLow >= 0 && loss.clipLow <= 1 && loss.clipHigh >= 1)) {
        throw new TrainingInputError(
          `${loss.type} clip thresholds are ratio bounds with clipLow ≤ 1 ≤ clipHigh (e.g. 0.8 and 1.2); got ${loss.clipLow} and ${loss.clipHigh}`,
        );
      }
      return;
    case "dro":
      if (!(Number.isFinite(loss.beta) && loss.beta >= 0)) throw new TrainingInputError(`dro beta must be a finite number ≥ 0; got ${loss.beta}`);
      return;
    case "grpo": {
      const parsed = PolicyLossConfig.safeParse(loss.config);
      if (!parsed.success) throw new TrainingInputError(`grpo loss config: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
      return;
    }
    default:
      throw new TrainingInputError(`unknown loss ${JSON.stringify((loss as { type: unknown }).type)}`);
  }
}

function checkDatum(d: Datum, index: number, config: TinyModelConfig, training: boolean): void {
  const where = `data[${index}]`;
  const n = d.tokens.length;
  if (n === 0) throw new TrainingInputError(`${where}.tokens is empty`);
  if (n > config.maxPositionEmbeddings)
    throw new TrainingInputError(`${where}.tokens has ${n} positions; this model's context is ${config.maxPositionEmbeddings}`);
  const ids = (field: "tokens" | "targetTokens") => {
    const values = d[field];
    if (values.length !== n) throw new TrainingInputError(`${where}.${field} has ${values.length} entries, tokens has ${n}`);
    const bad = values.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= config.vocabSize);
    if (bad >= 0) throw new TrainingInputError(`${where}.${field}[${bad}] = ${values[bad]} is not a token id (0..${config.vocabSize - 1})`);
  };
  ids("tokens");
  ids("targetTokens");
  if (!training) return;
  for (const field of ["logprobs", "advantages", "mask", "refLogprobs"] as const) {
    const values = d[field];
    if (values === undefined) continue;
    if (values.length !== n) throw new TrainingInputError(`${where}.${field} has ${values.length} entries, tokens has ${n}`);
    const bad = values.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) throw new TrainingInputError(`${where}.${field}[${bad}] = ${values[bad]} is not a finite number`);
  }
  const negative = d.mask.findIndex((m) => m < 0);
  if (negative >= 0) throw new TrainingInputError(`${where}.mask[${negative}] is negative`);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
