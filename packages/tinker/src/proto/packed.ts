import { WireEncodingError } from "../errors.js";
import type { TensorData, WireDatum } from "../wire.js";
import { DType } from "./schema.js";

/**
 * A `ForwardBackwardRequest` written straight into one buffer: sizes first, then every packed
 * array (token ids as int32, values as float32 or int64) written element by element through a
 * DataView, with no intermediate message objects. A 1.3 M-token batch is tens of megabytes, and
 * protobufjs's generic writer (one object per tensor, one Buffer per array, then copies) spent
 * most of a step's wire time on it. The bytes equal protobufjs's (`reference.ts`) and the SDK's.
 */

const TEXT = new TextEncoder();

function varintLength(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    n++;
  }
  return n;
}

/** Length of a length-delimited field (tag + length + payload) whose tag is one byte. */
const delimited = (payload: number) => 1 + varintLength(payload) + payload;

type Dtype = "int64" | "float32";

function dtypeOf(td: TensorData): Dtype {
  return td.dtype ?? (td.data.every(Number.isInteger) ? "int64" : "float32");
}

interface TensorPlan {
  name: Uint8Array;
  td: TensorData;
  dtype: Dtype;
  sparse: boolean;
  /** Bytes of the array payloads (dense, or the three CSR arrays). */
  values: number;
  csr: number;
  shape: number;
  tensor: number;
  entry: number;
}

function planTensor(name: string, td: TensorData): TensorPlan {
  const dtype = dtypeOf(td);
  const width = dtype === "int64" ? 8 : 4;
  const sparse = td.sparse_crow_indices !== undefined && td.sparse_col_indices !== undefined;
  const values = td.data.length * width;
  const csr = sparse ? delimited(values) + delimited(td.sparse_crow_indices!.length * 8) + delimited(td.sparse_col_indices!.length * 8) : 0;
  const shape = (td.shape ?? []).reduce((sum, dim) => sum + varintLength(dim), 0);
  const tensor = (sparse ? delimited(csr) : delimited(values)) + 2 + (shape > 0 ? delimited(shape) : 0);
  const encodedName = TEXT.encode(name);
  return { name: encodedName, td, dtype, sparse, values, csr, shape, tensor, entry: delimited(encodedName.length) + delimited(tensor) };
}

interface DatumPlan {
  /** `text`: the EncodedText message; `size`: the Chunk holding it. */
  chunks: { tokens: readonly number[]; text: number; size: number }[];
  tensors: TensorPlan[];
  size: number;
}

function planDatum(datum: WireDatum): DatumPlan {
  const chunks = datum.model_input.chunks.map((chunk) => {
    if (chunk.type !== "encoded_text") throw new WireEncodingError(`chunk type "${chunk.type}" has no protobuf encoding here`);
    const text = chunk.tokens.length > 0 ? delimited(chunk.tokens.length * 4) : 0;
    return { tokens: chunk.tokens, text, size: delimited(text) };
  });
  const tensors = Object.entries(datum.loss_fn_inputs).map(([name, td]) => planTensor(name, td));
  const size = chunks.reduce((s, c) => s + delimited(c.size), 0) + tensors.reduce((s, t) => s + delimited(t.entry), 0);
  return { chunks, tensors, size };
}

class Writer {
  pos = 0;
  readonly bytes: Uint8Array;
  private readonly view: DataView;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }

  byte(b: number): void {
    this.bytes[this.pos++] = b;
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.bytes[this.pos++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.bytes[this.pos++] = value;
  }

  /** A length-delimited field header. */
  field(tag: number, length: number): void {
    this.byte(tag);
    this.varint(length);
  }

  raw(bytes: Uint8Array): void {
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  int32s(values: readonly number[]): void {
    const v = this.view;
    let p = this.pos;
    for (let i = 0; i < values.length; i++, p += 4) v.setInt32(p, values[i]!, true);
    this.pos = p;
  }

  float32s(values: readonly number[]): void {
    const v = this.view;
    let p = this.pos;
    for (let i = 0; i < values.length; i++, p += 4) v.setFloat32(p, values[i]!, true);
    this.pos = p;
  }

  /** Two's-complement int64 as two 32-bit words (exact for every safe integer). */
  int64s(values: readonly number[]): void {
    const v = this.view;
    let p = this.pos;
    for (let i = 0; i < values.length; i++, p += 8) {
      const x = Math.trunc(values[i]!);
      v.setUint32(p, x >>> 0, true);
      v.setInt32(p + 4, Math.floor(x / 4294967296), true);
    }
    this.pos = p;
  }

  double(value: number): void {
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }
}

function writeTensor(w: Writer, t: TensorPlan): void {
  const array = (values: readonly number[], dtype: Dtype) => (dtype === "int64" ? w.int64s(values) : w.float32s(values));
  w.field(0x0a, t.name.length);
  w.raw(t.name);
  w.field(0x12, t.tensor);
  if (t.sparse) {
    w.field(0x12, t.csr);
    w.field(0x0a, t.values);
    array(t.td.data, t.dtype);
    w.field(0x12, t.td.sparse_crow_indices!.length * 8);
    w.int64s(t.td.sparse_crow_indices!);
    w.field(0x1a, t.td.sparse_col_indices!.length * 8);
    w.int64s(t.td.sparse_col_indices!);
  } else {
    w.field(0x0a, t.values);
    array(t.td.data, t.dtype);
  }
  w.byte(0x18);
  w.byte(t.dtype === "int64" ? DType.INT64 : DType.FLOAT32);
  if (t.shape > 0) {
    w.field(0x22, t.shape);
    for (const dim of t.td.shape!) w.varint(dim);
  }
}

export interface PackedForwardBackward {
  model_id: string;
  seq_id: number;
  data: readonly WireDatum[];
  loss_fn: string;
  loss_fn_config?: Record<string, number> | null;
  forward_only?: boolean;
}

/** Encode a `forward_backward` body; proto3 defaults are left out, as protobufjs and the SDK do. */
export function writeForwardBackwardRequest(body: PackedForwardBackward): Uint8Array {
  const modelId = TEXT.encode(body.model_id);
  const lossFn = TEXT.encode(body.loss_fn);
  const config = Object.entries(body.loss_fn_config ?? {}).map(([key, value]) => ({ key: TEXT.encode(key), value }));
  const datums = body.data.map(planDatum);
  if (!Number.isInteger(body.seq_id) || body.seq_id < 0 || body.seq_id > 0x7fffffff) throw new WireEncodingError(`seq_id ${body.seq_id} is not an int32 ≥ 0`);
  const entrySize = (key: Uint8Array) => delimited(key.length) + 9;
  const size =
    (modelId.length > 0 ? delimited(modelId.length) : 0) +
    (body.seq_id > 0 ? 1 + varintLength(body.seq_id) : 0) +
    datums.reduce((s, d) => s + delimited(d.size), 0) +
    (lossFn.length > 0 ? delimited(lossFn.length) : 0) +
    config.reduce((s, c) => s + delimited(entrySize(c.key)), 0) +
    (body.forward_only ? 2 : 0);
  const w = new Writer(size);
  if (modelId.length > 0) {
    w.field(0x0a, modelId.length);
    w.raw(modelId);
  }
  if (body.seq_id > 0) {
    w.byte(0x10);
    w.varint(body.seq_id);
  }
  for (const d of datums) {
    w.field(0x1a, d.size);
    for (const chunk of d.chunks) {
      w.field(0x0a, chunk.size);
      w.field(0x0a, chunk.text);
      if (chunk.tokens.length > 0) {
        w.field(0x0a, chunk.tokens.length * 4);
        w.int32s(chunk.tokens);
      }
    }
    for (const t of d.tensors) {
      w.field(0x12, t.entry);
      writeTensor(w, t);
    }
  }
  if (lossFn.length > 0) {
    w.field(0x22, lossFn.length);
    w.raw(lossFn);
  }
  for (const c of config) {
    w.field(0x2a, entrySize(c.key));
    w.field(0x0a, c.key.length);
    w.raw(c.key);
    w.byte(0x11);
    w.double(c.value);
  }
  if (body.forward_only) {
    w.byte(0x30);
    w.byte(1);
  }
  if (w.pos !== size) throw new WireEncodingError(`internal: wrote ${w.pos} bytes of ${size}`);
  return w.bytes;
}

/** A view of a decoded byte field; protobufjs leaves an absent one as a plain empty array. */
const viewOf = (bytes: Uint8Array) => (bytes instanceof Uint8Array ? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new DataView(new ArrayBuffer(0)));

/** Little-endian int32s of a packed byte field, as numbers. */
export function readInt32s(bytes: Uint8Array): number[] {
  const v = viewOf(bytes);
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = v.getInt32(i * 4, true);
  return out;
}

export function readFloat32s(bytes: Uint8Array): number[] {
  const v = viewOf(bytes);
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = v.getFloat32(i * 4, true);
  return out;
}

/** Little-endian int64s as numbers (exact within ±2^53). */
export function readInt64s(bytes: Uint8Array): number[] {
  const v = viewOf(bytes);
  const out = new Array<number>(bytes.length >> 3);
  for (let i = 0; i < out.length; i++) out[i] = v.getInt32(i * 8 + 4, true) * 4294967296 + v.getUint32(i * 8, true);
  return out;
}
