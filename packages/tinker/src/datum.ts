import { TinkerUsageError } from "./errors.js";
import { LocatedError } from "@envace/errors";
import { lengthMismatch } from "@envace/grpo";
import type { Datum } from "@envace/training";
import { toNumbers } from "./proto/packed.js";
import type { NumericArray, OutputTensor, WireDatum } from "./wire.js";

/** A dense 1-D tensor with its dtype and shape, as the hosted service expects them. */
export function tensor(data: readonly number[], dtype: "int64" | "float32"): OutputTensor {
  return { data: [...data], dtype, shape: [data.length] };
}

/** Per-token arrays sent as `loss_fn_inputs`, keyed by their wire names. */
export type LossInputs = Partial<Record<"target_tokens" | "logprobs" | "advantages" | "weights" | "mask" | "ref_logprobs", readonly number[]>>;

/** A wire datum: the tokens as one text chunk, and the given loss inputs. */
export function toWireDatum(tokens: readonly number[], inputs: LossInputs): WireDatum {
  const lossFnInputs = Object.create(null) as Record<string, OutputTensor>;
  for (const [name, values] of Object.entries(inputs)) {
    lossFnInputs[name] = tensor(values, name === "target_tokens" ? "int64" : "float32");
  }
  return { model_input: { chunks: [{ type: "encoded_text", tokens: [...tokens] }] }, loss_fn_inputs: lossFnInputs };
}

/** Check that every per-token array of a datum has the length of its tokens. */
export function checkDatum(datum: Datum, index: number): void {
  const n = datum.tokens.length;
  if (n === 0) throw new TinkerUsageError(`datum ${index}: no tokens`);
  const { targetTokens, logprobs, advantages, mask, refLogprobs } = datum;
  const mismatch = lengthMismatch(n, { targetTokens, logprobs, advantages, mask, refLogprobs });
  if (mismatch) throw new TinkerUsageError(`datum ${index}: ${mismatch.name} has ${mismatch.length} entries, tokens has ${n}`);
}

/** A wire datum the server cannot use; `where` (also `path`) names the offending field. */
export class WireDatumError extends LocatedError {
  override readonly code = "wire-datum";
  get path(): string {
    return this.where;
  }
}

/** The index of the first value that fails `ok`, or -1: one loop for JSON arrays and typed arrays alike. */
function firstBad(values: ArrayLike<number>, ok: (x: number) => boolean): number {
  for (let i = 0; i < values.length; i++) if (!ok(values[i]!)) return i;
  return -1;
}

const finite = (x: number) => Number.isFinite(x);
const tokenId = (x: number) => Number.isInteger(x) && x >= 0;

function dense(datum: WireDatum, index: number, name: string, length: number): NumericArray | undefined {
  const t = datum.loss_fn_inputs[name];
  if (!t) return undefined;
  const path = `data[${index}].loss_fn_inputs.${name}`;
  if (t.sparse_crow_indices || t.sparse_col_indices) throw new WireDatumError(path, "sparse tensors are not supported");
  if (t.shape && (t.shape.length !== 1 || t.shape[0] !== t.data.length)) {
    throw new WireDatumError(path, `shape [${t.shape.join(", ")}] is not [${t.data.length}]; only 1-D tensors are supported`);
  }
  if (t.data.length !== length) {
    throw new WireDatumError(path, `has ${t.data.length} entries, model_input has ${length} tokens`);
  }
  const bad = firstBad(t.data, finite);
  if (bad >= 0) throw new WireDatumError(`${path}[${bad}]`, "is not a finite number");
  return t.data;
}

/** The token ids of a datum's chunks, in one array (without spreading them through a call's arguments). */
function tokensOf(datum: WireDatum, index: number): number[] {
  const chunks = datum.model_input.chunks;
  const only = chunks.length === 1 ? chunks[0] : undefined;
  if (only?.type === "encoded_text" && Array.isArray(only.tokens)) return only.tokens;
  const tokens: number[] = [];
  chunks.forEach((chunk, c) => {
    if (chunk.type !== "encoded_text") {
      throw new WireDatumError(`data[${index}].model_input.chunks[${c}]`, `chunk type "${chunk.type}" is not supported (text only)`);
    }
    for (const token of chunk.tokens) tokens.push(token);
  });
  return tokens;
}

/**
 * Decode a wire datum for `lossFn`. Tinker's RL losses have no mask (prompt positions carry zero
 * advantage), so the mask is the `mask` input when given, else every position; `cross_entropy`
 * takes its `weights` as the mask. Values are checked where they lie (a protobuf body's typed
 * arrays are read in place) and become the plain arrays of a `Datum` once, here.
 */
export function fromWireDatum(datum: WireDatum, index: number, lossFn: string): Datum {
  const tokens = tokensOf(datum, index);
  const n = tokens.length;
  if (n === 0) throw new WireDatumError(`data[${index}].model_input`, "has no tokens");
  const targetTokens = dense(datum, index, "target_tokens", n);
  if (!targetTokens) throw new WireDatumError(`data[${index}].loss_fn_inputs`, "target_tokens is required");
  if (firstBad(targetTokens, tokenId) >= 0) {
    throw new WireDatumError(`data[${index}].loss_fn_inputs.target_tokens`, "must hold non-negative integers");
  }
  const weights = dense(datum, index, "weights", n);
  const mask = dense(datum, index, "mask", n);
  if (lossFn === "cross_entropy" && !weights) throw new WireDatumError(`data[${index}].loss_fn_inputs`, "cross_entropy requires weights");
  const refLogprobs = dense(datum, index, "ref_logprobs", n);
  const logprobs = dense(datum, index, "logprobs", n);
  const advantages = dense(datum, index, "advantages", n);
  const lossMask = lossFn === "cross_entropy" ? weights : mask;
  return {
    tokens,
    targetTokens: toNumbers(targetTokens),
    logprobs: logprobs ? toNumbers(logprobs) : new Array<number>(n).fill(0),
    advantages: advantages ? toNumbers(advantages) : new Array<number>(n).fill(0),
    mask: lossMask ? toNumbers(lossMask) : new Array<number>(n).fill(1),
    ...(refLogprobs ? { refLogprobs: toNumbers(refLogprobs) } : {}),
  };
}
