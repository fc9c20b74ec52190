import { WireEncodingError } from "../errors.js";
import type { NumericArray, TensorData, TokenIds, WireDatum } from "../wire.js";
import { DType } from "./schema.js";

/**
 * A `ForwardBackwardRequest` written straight into one buffer: sizes first, then every packed
 * array (token ids as int32, values as float32 or int64) converted by the typed arrays' own `set`
 * (or copied as bytes when it is already a typed array of the wire's type), with no intermediate
 * message objects. A 1.3 M-token batch is tens of megabytes, and
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
  if (td.dtype) return td.dtype;
  if (td.data instanceof Float32Array) return "float32";
  for (const x of td.data) if (!Number.isInteger(x)) return "float32";
  return "int64";
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
  chunks: { tokens: TokenIds; text: number; size: number }[];
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

/** Whether typed arrays are little-endian here, as the wire is (every platform but s390x). */
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

class Writer {
  pos = 0;
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** Aligned room where number arrays become wire words before they are copied in (the output position has any alignment). */
  private scratch = new ArrayBuffer(0);

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

  private room(bytes: number): ArrayBuffer {
    if (this.scratch.byteLength < bytes) this.scratch = new ArrayBuffer(Math.max(bytes, this.scratch.byteLength * 2));
    return this.scratch;
  }

  private words(words: Int32Array | Float32Array): void {
    this.raw(new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
  }

  int32s(values: NumericArray): void {
    this.words32(values, Int32Array, (at, x) => this.view.setInt32(at, x, true));
  }

  float32s(values: NumericArray): void {
    this.words32(values, Float32Array, (at, x) => this.view.setFloat32(at, x, true));
  }

  /** 32-bit little-endian words: a typed array of the same kind as it is, anything else through scratch. */
  private words32(values: NumericArray, Words: Int32ArrayConstructor | Float32ArrayConstructor, set: (at: number, value: number) => void): void {
    if (!LITTLE) {
      for (let i = 0; i < values.length; i++, this.pos += 4) set(this.pos, values[i]!);
      return;
    }
    if (values instanceof Words) {
      this.words(values);
      return;
    }
    const words = new Words(this.room(values.length * 4), 0, values.length);
    words.set(values);
    this.words(words);
  }

  /** Two's-complement int64 as two 32-bit words (exact for every safe integer). */
  int64s(values: NumericArray): void {
    if (!LITTLE) {
      for (let i = 0; i < values.length; i++, this.pos += 8) {
        const x = Math.trunc(values[i]!);
        this.view.setUint32(this.pos, x >>> 0, true);
        this.view.setInt32(this.pos + 4, Math.floor(x / 4294967296), true);
      }
      return;
    }
    const words = new Int32Array(this.room(values.length * 8), 0, values.length * 2);
    for (let i = 0; i < values.length; i++) {
      const x = Math.trunc(values[i]!);
      words[2 * i] = x | 0;
      words[2 * i + 1] = Math.floor(x / 4294967296);
    }
    this.words(words);
  }

  double(value: number): void {
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }
}

function writeTensor(w: Writer, t: TensorPlan): void {
  const array = (values: NumericArray, dtype: Dtype) => (dtype === "int64" ? w.int64s(values) : w.float32s(values));
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

/** The body of a `forward_backward` request as the SDK 0.25 sends it. */
export interface ForwardBackwardBody {
  model_id: string;
  seq_id: number;
  data: readonly WireDatum[];
  loss_fn: string;
  loss_fn_config?: Record<string, number> | null;
  forward_only?: boolean;
}

/** Encode a `forward_backward` body; proto3 defaults are left out, as protobufjs and the SDK do. */
export function writeForwardBackwardRequest(body: ForwardBackwardBody): Uint8Array {
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

/**
 * Decoded packed fields are typed arrays over the body's own bytes (no per-element copy) when the
 * field starts at a multiple of the element size; otherwise the field's bytes are copied once to an
 * aligned buffer first. protobufjs leaves an absent field as a plain empty array.
 */
function aligned(bytes: Uint8Array, width: number): Uint8Array {
  if (!(bytes instanceof Uint8Array)) return new Uint8Array(0);
  const usable = bytes.subarray(0, bytes.length - (bytes.length % width));
  // A copy, not `slice`: a Node Buffer's `slice` is a view at the same offset.
  return usable.byteOffset % width === 0 ? usable : new Uint8Array(usable);
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Little-endian int32s of a packed byte field. */
export function readInt32s(bytes: Uint8Array): Int32Array {
  const a = aligned(bytes, 4);
  if (LITTLE) return new Int32Array(a.buffer, a.byteOffset, a.length >> 2);
  const v = viewOf(a);
  return Int32Array.from({ length: a.length >> 2 }, (_, i) => v.getInt32(i * 4, true));
}

/** Little-endian float32s of a packed byte field. */
export function readFloat32s(bytes: Uint8Array): Float32Array {
  const a = aligned(bytes, 4);
  if (LITTLE) return new Float32Array(a.buffer, a.byteOffset, a.length >> 2);
  const v = viewOf(a);
  return Float32Array.from({ length: a.length >> 2 }, (_, i) => v.getFloat32(i * 4, true));
}

/** Little-endian int64s as doubles (exact within ±2^53): one pass over the two 32-bit words of each. */
export function readInt64s(bytes: Uint8Array): Float64Array {
  const a = aligned(bytes, 8);
  const out = new Float64Array(a.length >> 3);
  if (!LITTLE) {
    const v = viewOf(a);
    for (let i = 0; i < out.length; i++) out[i] = v.getInt32(i * 8 + 4, true) * 4294967296 + v.getUint32(i * 8, true);
    return out;
  }
  const lo = new Uint32Array(a.buffer, a.byteOffset, out.length * 2);
  const hi = new Int32Array(a.buffer, a.byteOffset, out.length * 2);
  for (let i = 0; i < out.length; i++) out[i] = hi[2 * i + 1]! * 4294967296 + lo[2 * i]!;
  return out;
}

/** bfloat16 is the upper half of a float32. */
export function readBfloat16s(bytes: Uint8Array): Float32Array {
  const a = aligned(bytes, 2);
  const v = viewOf(a);
  const words = new Uint32Array(a.length >> 1);
  for (let i = 0; i < words.length; i++) words[i] = v.getUint16(i * 2, true) << 16;
  return new Float32Array(words.buffer);
}

/** Plain numbers of any numeric array (for the shapes that are `number[]`: results, samples, `Datum`). */
export function toNumbers(values: NumericArray | readonly number[]): number[] {
  if (Array.isArray(values)) return values;
  const out: number[] = [];
  for (const x of values) out.push(x);
  return out;
}
