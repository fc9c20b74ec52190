import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { halfToFloat } from "@envace/training";
import * as ort from "onnxruntime-node";
import { OnnxModelError } from "./errors.js";

type KvType = "float32" | "float16";

/** The cache of one sequence: the `present.*` tensors of the last step and how many positions they hold. */
export interface KvCache {
  length: number;
  /** Keyed by the input name they feed next: `past_key_values.{i}.key` / `.value`. */
  tensors: Record<string, ort.Tensor>;
  /** The session (weights) that computed it; the sequence continues on it. Absent for an empty cache. */
  session?: ort.InferenceSession;
}

export interface ForwardResult {
  /** Logits of the last position, as float32. */
  logits: Float32Array;
  cache: KvCache;
}

export interface OnnxSessionOptions {
  /** Threads inside one operator. Default: onnxruntime's choice (all cores). */
  threads?: number;
  /** Default `all`. */
  graphOptimizationLevel?: ort.InferenceSession.SessionOptions["graphOptimizationLevel"];
}

/** What the graph's interface says about the cache, read from the session's metadata. */
interface CacheLayout {
  layers: number;
  kvHeads: number;
  headDim: number;
  type: KvType;
  hasPositionIds: boolean;
  hasCacheBranch: boolean;
  logitsToKeep: string | undefined;
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;

/** Candidate model files of a Hugging Face ONNX export, in the order they are tried. */
export const MODEL_FILES = ["model.onnx", "onnx/model.onnx", "decoder_model_merged.onnx", "onnx/decoder_model_merged.onnx"];

/**
 * A decoder-only causal LM in onnxruntime-node, in the layout of the Hugging Face exporters
 * (optimum, transformers.js): `input_ids`, `attention_mask`, optional `position_ids`,
 * `past_key_values.{i}.key/value` in; `logits`, `present.{i}.key/value` out. One call runs the
 * new tokens of one sequence against its cache.
 */
export class OnnxCausalLM {
  #session: ort.InferenceSession;
  #layout: CacheLayout;
  readonly #options: OnnxSessionOptions;
  /** Bumped whenever the weights change, so caches built on old weights are never reused. */
  #generation = 0;

  private constructor(session: ort.InferenceSession, layout: CacheLayout, options: OnnxSessionOptions) {
    this.#session = session;
    this.#layout = layout;
    this.#options = options;
  }

  /** Load `model.onnx` (or `file`) from a model folder; missing paths are named in the error. */
  static async load(dir: string, options: OnnxSessionOptions & { file?: string; fallbackDims?: FallbackDims } = {}): Promise<OnnxCausalLM> {
    const path = await resolveModelFile(dir, options.file);
    const session = await createSession(path, options);
    return new OnnxCausalLM(session, cacheLayout(session, path, options.fallbackDims), options);
  }

  /** A model held in memory (an export that was never written to disk). */
  static async fromBytes(bytes: Uint8Array, options: OnnxSessionOptions & { fallbackDims?: FallbackDims } = {}): Promise<OnnxCausalLM> {
    const session = await createSession(bytes, options);
    return new OnnxCausalLM(session, cacheLayout(session, "model bytes", options.fallbackDims), options);
  }

  get layers(): number {
    return this.#layout.layers;
  }

  /** Changes whenever `replaceModel` swaps the weights. */
  get weightsVersion(): number {
    return this.#generation;
  }

  /** Bytes of cache per position of one sequence. */
  get cacheBytesPerToken(): number {
    return this.#layout.layers * 2 * this.#layout.kvHeads * this.#layout.headDim * (this.#layout.type === "float16" ? 2 : 4);
  }

  /**
   * Swap in new weights (the same graph interface, e.g. a re-export after an optimizer step).
   * New sequences use them; a sequence under way finishes on the weights it started with, so
   * every generation is drawn from one policy.
   */
  async replaceModel(model: Uint8Array | string): Promise<void> {
    const session = await createSession(model, this.#options);
    const layout = cacheLayout(session, typeof model === "string" ? model : "model bytes", {
      kvHeads: this.#layout.kvHeads,
      headDim: this.#layout.headDim,
    });
    if (layout.layers !== this.#layout.layers || layout.kvHeads !== this.#layout.kvHeads || layout.headDim !== this.#layout.headDim) {
      throw new OnnxModelError("replaceModel: the new model's cache layout differs from the loaded one");
    }
    // Sequences already under way keep the old session through their caches; the collector
    // frees it once none refers to it.
    this.#session = session;
    this.#layout = layout;
    this.#generation++;
  }

  emptyCache(): KvCache {
    const { layers, kvHeads, headDim, type } = this.#layout;
    const tensors = Object.create(null) as Record<string, ort.Tensor>;
    for (let i = 0; i < layers; i++) {
      for (const kind of ["key", "value"]) {
        tensors[`past_key_values.${i}.${kind}`] = new ort.Tensor(type, type === "float16" ? new Uint16Array(0) : new Float32Array(0), [1, kvHeads, 0, headDim]);
      }
    }
    return { length: 0, tensors };
  }

  /** Run `tokens` (the next positions of one sequence) and return the last position's logits and the grown cache. */
  async forward(tokens: readonly number[], cache: KvCache = this.emptyCache()): Promise<ForwardResult> {
    const { logits, cache: next } = await this.#run(tokens, cache, true);
    return { logits: logits[0]!, cache: next };
  }

  /** Logits of every position of `tokens` (no cache), for checks against a reference. */
  async allLogits(tokens: readonly number[]): Promise<Float32Array[]> {
    return (await this.#run(tokens, this.emptyCache(), false)).logits;
  }

  async #run(tokens: readonly number[], cache: KvCache, lastOnly: boolean): Promise<{ logits: Float32Array[]; cache: KvCache }> {
    if (tokens.length === 0) throw new RangeError("forward needs at least one token");
    const layout = this.#layout;
    const total = cache.length + tokens.length;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor(
        "int64",
        BigInt64Array.from(tokens, (t) => BigInt(t)),
        [1, tokens.length],
      ),
      attention_mask: new ort.Tensor("int64", new BigInt64Array(total).fill(1n), [1, total]),
      ...cache.tensors,
    };
    if (layout.hasPositionIds) {
      feeds.position_ids = new ort.Tensor(
        "int64",
        BigInt64Array.from(tokens, (_, i) => BigInt(cache.length + i)),
        [1, tokens.length],
      );
    }
    if (layout.hasCacheBranch) feeds.use_cache_branch = new ort.Tensor("bool", [cache.length > 0], [1]);
    if (layout.logitsToKeep) feeds[layout.logitsToKeep] = new ort.Tensor("int64", BigInt64Array.from([BigInt(lastOnly ? 1 : tokens.length)]), []);
    // A sequence stays on the weights it started with, even if they were replaced meanwhile.
    const session = cache.session ?? this.#session;
    const outputs = await session.run(feeds);
    const logitsTensor = outputs.logits;
    if (!logitsTensor) throw new OnnxModelError("the model produced no `logits` output");
    const [, rows = 1, vocab = 0] = logitsTensor.dims;
    const rowsOf = (index: number): Float32Array => toFloat32(logitsTensor, index * vocab, vocab);
    const logits = lastOnly ? [rowsOf(rows - 1)] : Array.from({ length: rows }, (_, i) => rowsOf(i));
    const tensors = Object.create(null) as Record<string, ort.Tensor>;
    for (let i = 0; i < layout.layers; i++) {
      for (const kind of ["key", "value"]) {
        const present = outputs[`present.${i}.${kind}`];
        if (!present) throw new OnnxModelError(`the model produced no present.${i}.${kind} output`);
        tensors[`past_key_values.${i}.${kind}`] = present;
      }
    }
    return { logits, cache: { length: total, tensors, session } };
  }

  /** Release the native session now rather than at garbage collection. The model cannot run afterwards. */
  async dispose(): Promise<void> {
    await this.#session.release();
  }

  /** The first `length` positions of a cache (a shared prefix of another sequence). */
  truncateCache(cache: KvCache, length: number): KvCache {
    if (length >= cache.length) return cache;
    const tensors = Object.create(null) as Record<string, ort.Tensor>;
    for (const [name, tensor] of Object.entries(cache.tensors)) {
      const [batch = 1, heads = 1, positions = 0, dim = 0] = tensor.dims;
      const source = tensor.data as Float32Array | Uint16Array;
      const out = source instanceof Float32Array ? new Float32Array(batch * heads * length * dim) : new Uint16Array(batch * heads * length * dim);
      for (let h = 0; h < batch * heads; h++) out.set(source.subarray(h * positions * dim, h * positions * dim + length * dim), h * length * dim);
      tensors[name] = new ort.Tensor(tensor.type as KvType, out, [batch, heads, length, dim]);
    }
    return { length, tensors, ...(cache.session ? { session: cache.session } : {}) };
  }
}

export interface FallbackDims {
  kvHeads?: number;
  headDim?: number;
}

async function createSession(model: Uint8Array | string, options: OnnxSessionOptions): Promise<ort.InferenceSession> {
  const sessionOptions: ort.InferenceSession.SessionOptions = {
    graphOptimizationLevel: options.graphOptimizationLevel ?? "all",
    ...(options.threads ? { intraOpNumThreads: options.threads, interOpNumThreads: 1 } : {}),
  };
  try {
    return typeof model === "string" ? await ort.InferenceSession.create(model, sessionOptions) : await ort.InferenceSession.create(model, sessionOptions);
  } catch (error) {
    throw new OnnxModelError(`onnxruntime could not load ${typeof model === "string" ? model : "the model"}: ${(error as Error).message}`, { cause: error });
  }
}

/** The model file inside `dir`: `file` if given, else the first of `MODEL_FILES` that exists. */
export async function resolveModelFile(dir: string, file?: string): Promise<string> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new OnnxModelError(`ONNX model folder not found: ${dir}`);
  if (!info.isDirectory()) throw new OnnxModelError(`not a folder: ${dir} (expected an ONNX model folder)`);
  const candidates = file ? [file] : MODEL_FILES;
  for (const candidate of candidates) {
    const path = join(dir, candidate);
    if (
      await stat(path).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return path;
  }
  throw new OnnxModelError(`no ONNX model in ${dir}: looked for ${candidates.map((c) => join(dir, c)).join(", ")}`);
}

function cacheLayout(session: ort.InferenceSession, where: string, fallback: FallbackDims = {}): CacheLayout {
  const known = new Set(["input_ids", "attention_mask", "position_ids", "use_cache_branch", "num_logits_to_keep", "logits_to_keep"]);
  let layers = 0;
  let type: KvType = "float32";
  let kvHeads = fallback.kvHeads;
  let headDim = fallback.headDim;
  const unexpected: string[] = [];
  for (const meta of session.inputMetadata) {
    const match = PAST.exec(meta.name);
    if (!match) {
      if (!known.has(meta.name)) unexpected.push(meta.name);
      continue;
    }
    layers = Math.max(layers, Number(match[1]) + 1);
    if (meta.isTensor) {
      if (meta.type === "float16") type = "float16";
      else if (meta.type !== "float32") throw new OnnxModelError(`${where}: ${meta.name} has type ${meta.type}; only float32 and float16 caches are supported`);
      const [, heads, , dim] = meta.shape;
      if (typeof heads === "number") kvHeads = heads;
      if (typeof dim === "number") headDim = dim;
    }
  }
  const inputs = new Set(session.inputNames);
  const problems: string[] = [];
  if (!inputs.has("input_ids") || !inputs.has("attention_mask")) problems.push("inputs input_ids and attention_mask are required");
  if (layers === 0) problems.push("no past_key_values.{i}.key/value inputs (export with a KV cache, e.g. optimum's text-generation-with-past)");
  if (!session.outputNames.includes("logits")) problems.push("no logits output");
  if (unexpected.length > 0) problems.push(`unsupported inputs ${unexpected.join(", ")}`);
  if (kvHeads === undefined || headDim === undefined)
    problems.push("the cache shape [batch, kv_heads, past, head_dim] is symbolic and config.json does not give it");
  if (problems.length > 0) throw new OnnxModelError(`${where} is not a decoder with a KV cache in the Hugging Face layout: ${problems.join("; ")}`);
  return {
    layers,
    kvHeads: kvHeads!,
    headDim: headDim!,
    type,
    hasPositionIds: inputs.has("position_ids"),
    hasCacheBranch: inputs.has("use_cache_branch"),
    logitsToKeep: ["num_logits_to_keep", "logits_to_keep"].find((name) => inputs.has(name)),
  };
}

function toFloat32(tensor: ort.Tensor, offset: number, length: number): Float32Array {
  const data = tensor.data;
  if (data instanceof Float32Array) return data.slice(offset, offset + length);
  if (tensor.type === "float16" && data instanceof Uint16Array) {
    const out = new Float32Array(length);
    for (let i = 0; i < length; i++) out[i] = halfToFloat(data[offset + i]!);
    return out;
  }
  throw new OnnxModelError(`logits of type ${tensor.type} are not supported`);
}

/** Read a JSON file that may be absent. */
export async function readOptionalJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as unknown;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new OnnxModelError(`${path}: ${(error as Error).message}`, { cause: error });
  }
}
