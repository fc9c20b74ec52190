import { WireEncodingError } from "../errors.js";
import type { ForwardBackwardOutput, NumericArray, OutputTensor, SampleResponse, TensorData, WireDatum } from "../wire.js";
import { type ForwardBackwardBody, readBfloat16s, readFloat32s, readInt32s, readInt64s, toNumbers, writeForwardBackwardRequest } from "./packed.js";
import { DType, messageType, StopReason } from "./schema.js";

export { type ForwardBackwardBody, readFloat32s, readInt32s, toNumbers } from "./packed.js";

/**
 * Conversions between the protobuf wire (SDK ≥ 0.25) and the JSON shapes of `wire.ts`, so the
 * rest of the package handles one shape. Encoders leave out proto3 default values, as the
 * Python SDK's encoder does, so the bytes match it.
 */

type Message = Record<string, unknown>;

function float32Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const v = new DataView(out.buffer);
  values.forEach((x, i) => v.setFloat32(i * 4, x, true));
  return out;
}

function int32Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const v = new DataView(out.buffer);
  values.forEach((x, i) => v.setInt32(i * 4, x, true));
  return out;
}

function int64Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 8);
  const v = new DataView(out.buffer);
  values.forEach((x, i) => {
    v.setUint32(i * 8, x >>> 0, true);
    v.setInt32(i * 8 + 4, Math.floor(x / 4294967296), true);
  });
  return out;
}

/** Elements of a tensor of `dtype` as a typed array, widened as the SDK widens them (int32 → int64, bf16 → float32). */
function readTensor(bytes: Uint8Array, dtype: number): { data: NumericArray; dtype: "int64" | "float32" } {
  switch (dtype) {
    case DType.INT64:
      return { data: readInt64s(bytes), dtype: "int64" };
    case DType.INT32:
      return { data: readInt32s(bytes), dtype: "int64" };
    case DType.BFLOAT16:
      return { data: readBfloat16s(bytes), dtype: "float32" };
    case DType.FLOAT32:
      return { data: readFloat32s(bytes), dtype: "float32" };
    default:
      throw new WireEncodingError(`unsupported tensor dtype ${dtype}`);
  }
}

export function encodeForwardBackwardRequest(body: ForwardBackwardBody): Uint8Array {
  return writeForwardBackwardRequest(body);
}

interface DecodedTensor {
  dense?: Uint8Array;
  sparse_csr?: { values: Uint8Array; crow_indices: Uint8Array; col_indices: Uint8Array };
  dtype: number;
  shape: (number | { toNumber(): number })[];
}

interface DecodedChunk {
  encoded_text?: { tokens: Uint8Array };
  image?: { data: Uint8Array; format: string; expected_tokens?: number };
  dmel?: { dmel: Uint8Array };
}

function tensorFromProto(t: DecodedTensor): TensorData {
  const shape = t.shape.map(Number);
  if (t.sparse_csr) {
    const values = readTensor(t.sparse_csr.values, t.dtype);
    return {
      data: values.data,
      dtype: values.dtype,
      shape,
      sparse_crow_indices: readInt64s(t.sparse_csr.crow_indices),
      sparse_col_indices: readInt64s(t.sparse_csr.col_indices),
    };
  }
  const dense = readTensor(t.dense ?? new Uint8Array(), t.dtype);
  return { ...dense, ...(shape.length > 0 ? { shape } : {}) };
}

function chunkFromProto(chunk: DecodedChunk): WireDatum["model_input"]["chunks"][number] {
  if (chunk.encoded_text) return { type: "encoded_text", tokens: readInt32s(chunk.encoded_text.tokens) };
  if (chunk.image) return { type: "image", format: chunk.image.format };
  if (chunk.dmel) return { type: "dmel" };
  return { type: "encoded_text", tokens: [] };
}

/**
 * A protobuf `forward_backward` body as the JSON request shape (`forward_backward_input`), plus
 * its `forward_only` flag. Throws on bytes that are not such a message.
 */
export function decodeForwardBackwardRequest(bytes: Uint8Array): { body: Record<string, unknown>; forwardOnly: boolean } {
  const msg = messageType("ForwardBackwardRequest").decode(bytes) as unknown as {
    model_id: string;
    seq_id: number;
    data: { model_input: DecodedChunk[]; loss_fn_inputs: Record<string, DecodedTensor> }[];
    loss_fn: string;
    loss_fn_config: Record<string, number>;
    forward_only: boolean;
  };
  const data = msg.data.map((datum) => ({
    model_input: { chunks: datum.model_input.map(chunkFromProto) },
    loss_fn_inputs: Object.fromEntries(Object.entries(datum.loss_fn_inputs).map(([name, t]) => [name, tensorFromProto(t)])),
  }));
  const config = Object.keys(msg.loss_fn_config).length > 0 ? { loss_fn_config: { ...msg.loss_fn_config } } : {};
  return {
    body: { model_id: msg.model_id, seq_id: msg.seq_id, forward_backward_input: { data, loss_fn: msg.loss_fn, ...config } },
    forwardOnly: msg.forward_only,
  };
}

/** A `forward_backward` result as one batched `ArrayRecord` (what the SDK 0.25 decodes). */
export function encodeForwardBackwardOutput(out: ForwardBackwardOutput): Uint8Array {
  const names = [...new Set(out.loss_fn_outputs.flatMap((o) => Object.keys(o)))];
  const fields = Object.fromEntries(
    names.map((name) => {
      const tensors = out.loss_fn_outputs.map((o) => (o as Record<string, OutputTensor | undefined>)[name] ?? { data: [] });
      const int = tensors.every((t) => t.dtype === "int64");
      const offsets = [0];
      for (const t of tensors) offsets.push(offsets.at(-1)! + t.data.length * (int ? 8 : 4));
      const flat = tensors.flatMap((t) => t.data);
      return [name, { data: int ? int64Bytes(flat) : float32Bytes(flat), offsets: int64Bytes(offsets), dtype: int ? DType.INT64 : DType.FLOAT32 }];
    }),
  );
  const msg: Message = {
    loss_fn_output_type: out.loss_fn_output_type ?? "ArrayRecord",
    loss_fn_outputs: out.loss_fn_outputs.length > 0 ? [{ fields, num_datums: out.loss_fn_outputs.length }] : [],
    metrics: out.metrics,
  };
  const type = messageType("ForwardBackwardOutput");
  return type.encode(type.fromObject(msg)).finish();
}

export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const msg = messageType("ForwardBackwardOutput").decode(bytes) as unknown as {
    loss_fn_output_type: string;
    loss_fn_outputs: { fields: Record<string, { data: Uint8Array; offsets: Uint8Array; dtype: number }>; num_datums: number | { toNumber(): number } }[];
    metrics: Record<string, number>;
  };
  const outputs: Record<string, OutputTensor>[] = [];
  for (const record of msg.loss_fn_outputs) {
    const count = Number(record.num_datums);
    const start = outputs.length;
    for (let i = 0; i < count; i++) outputs.push({});
    for (const [name, bt] of Object.entries(record.fields)) {
      const size = bt.dtype === DType.INT64 ? 8 : bt.dtype === DType.BFLOAT16 ? 2 : 4;
      const all = readTensor(bt.data, bt.dtype);
      const offsets = readInt64s(bt.offsets);
      for (let i = 0; i + 1 < offsets.length && i < count; i++) {
        const data = toNumbers((all.data as Float32Array | Float64Array).subarray(offsets[i]! / size, offsets[i + 1]! / size));
        outputs[start + i]![name] = { data, dtype: all.dtype, shape: [data.length] };
      }
    }
  }
  return {
    loss_fn_output_type: msg.loss_fn_output_type.split(":").at(-1) ?? "ArrayRecord",
    loss_fn_outputs: outputs as ForwardBackwardOutput["loss_fn_outputs"],
    metrics: { ...msg.metrics },
  };
}

/** A sample result; `prompt_logprobs` entries that are null (the first) travel as NaN. */
export function encodeSampleResponse(out: SampleResponse & { prompt_logprobs?: (number | null)[] | null }): Uint8Array {
  const msg: Message = {
    sequences: out.sequences.map((s) => ({
      ...(s.stop_reason === "length" ? { stop_reason: StopReason.LENGTH } : {}),
      ...(s.tokens.length > 0 ? { tokens: int32Bytes(s.tokens) } : {}),
      ...(s.logprobs ? { logprobs: float32Bytes(s.logprobs) } : {}),
    })),
    ...(out.prompt_logprobs ? { prompt_logprobs: float32Bytes(out.prompt_logprobs.map((v) => v ?? Number.NaN)) } : {}),
    ...(out.topk_prompt_logprobs ? { topk_prompt_logprobs: topkTable(out.topk_prompt_logprobs) } : {}),
  };
  const type = messageType("SampleResponse");
  return type.encode(type.fromObject(msg)).finish();
}

/** An empty cell of a protobuf top-k table (fewer than k candidates, or the unscored first position). */
const TOPK_EMPTY_LOGPROB = -99999;

/**
 * Per-position top-k lists (null where a position has none) as the protobuf N × k table, k being
 * the longest list: shorter rows and null ones are filled with empty cells.
 */
export function topkTable(rows: readonly (readonly (readonly [number, number])[] | null)[]): {
  token_ids: Uint8Array;
  logprobs: Uint8Array;
  k: number;
  prompt_length: number;
} {
  const k = Math.max(1, ...rows.map((row) => row?.length ?? 0));
  const ids = new Array<number>(rows.length * k).fill(0);
  const lps = new Array<number>(rows.length * k).fill(TOPK_EMPTY_LOGPROB);
  rows.forEach((row, i) =>
    row?.forEach(([token, lp], j) => {
      ids[i * k + j] = token;
      lps[i * k + j] = lp;
    }),
  );
  return { token_ids: int32Bytes(ids), logprobs: float32Bytes(lps), k, prompt_length: rows.length };
}

/** A protobuf top-k table (N × k, row-major) as one list of [token, log-probability] pairs per position, null where a row is empty. */
export function topkRows(topk: { token_ids: Uint8Array; logprobs: Uint8Array; k: number }): ([number, number][] | null)[] {
  const ids = readInt32s(topk.token_ids);
  const lps = readFloat32s(topk.logprobs);
  if (ids.length !== lps.length || topk.k === 0 || ids.length % topk.k !== 0) {
    throw new WireEncodingError(`top-k prompt logprobs: ${ids.length} token ids and ${lps.length} logprobs do not fill rows of k = ${topk.k}`);
  }
  const rows: ([number, number][] | null)[] = [];
  for (let start = 0; start < ids.length; start += topk.k) {
    const row: [number, number][] = [];
    for (let j = start; j < start + topk.k; j++) if (lps[j]! > TOPK_EMPTY_LOGPROB) row.push([ids[j]!, lps[j]!]);
    rows.push(row.length > 0 ? row : null);
  }
  return rows;
}

export function decodeSampleResponse(bytes: Uint8Array): SampleResponse & { prompt_logprobs: (number | null)[] | null } {
  const msg = messageType("SampleResponse").decode(bytes) as unknown as {
    sequences: { stop_reason: number; tokens: Uint8Array; logprobs?: Uint8Array }[];
    prompt_logprobs?: Uint8Array;
    topk_prompt_logprobs?: { token_ids: Uint8Array; logprobs: Uint8Array; k: number };
  };
  return {
    sequences: msg.sequences.map((s) => ({
      stop_reason: s.stop_reason === StopReason.LENGTH ? ("length" as const) : ("stop" as const),
      tokens: toNumbers(readInt32s(s.tokens)),
      logprobs: s.logprobs ? toNumbers(readFloat32s(s.logprobs)) : null,
    })),
    prompt_logprobs: msg.prompt_logprobs ? toNumbers(readFloat32s(msg.prompt_logprobs)).map((v) => (Number.isNaN(v) ? null : v)) : null,
    ...(msg.topk_prompt_logprobs ? { topk_prompt_logprobs: topkRows(msg.topk_prompt_logprobs) } : {}),
  };
}
