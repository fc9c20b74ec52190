import { InvariantError, LocatedError } from "@envace/errors";
import { CheckpointError, TrainingInputError } from "./errors.js";
import { readFile } from "node:fs/promises";
import { writeFileAtomically } from "@envace/records";
import { z } from "zod";

/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header mapping each tensor
 * name to its dtype, shape and byte range, then the raw little-endian data. Tensors are written
 * as float32 and read from float32, float16, bfloat16 or float64 (converted to float32), which
 * covers the checkpoints Hugging Face tools write.
 */
export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

/** A file that is not valid safetensors; `where` (also `file`) names it. */
export class SafetensorsError extends LocatedError {
  override readonly code = "safetensors";
  get file(): string {
    return this.where;
  }
}

const TensorEntry = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

const BYTES_PER_ELEMENT: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

assertLittleEndian();

/** Serialise tensors (in the order given) with optional string metadata. */
export function encodeSafetensors(tensors: ReadonlyMap<string, NamedTensor>, metadata: Record<string, string> = {}): Uint8Array {
  // Tensor names are the caller's: on `{}` one named `__proto__` would set the prototype and vanish from the JSON.
  const header = Object.create(null) as Record<string, unknown>;
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, tensor] of tensors) {
    const size = tensor.shape.reduce((a, b) => a * b, 1);
    if (size !== tensor.data.length) {
      throw new TrainingInputError(`tensor ${name}: shape [${tensor.shape.join(", ")}] holds ${size} values but data has ${tensor.data.length}`);
    }
    header[name] = { dtype: "F32", shape: tensor.shape, data_offsets: [offset, offset + size * 4] };
    offset += size * 4;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  // Pad the header with spaces so the data starts 8-byte aligned, as the reference writer does.
  const headerBytes = new Uint8Array(json.length + ((8 - (json.length % 8)) % 8)).fill(0x20);
  headerBytes.set(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const tensor of tensors.values()) {
    out.set(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength), at);
    at += tensor.data.byteLength;
  }
  return out;
}

/** Parse a safetensors file; `file` names it in errors. */
export function decodeSafetensors(bytes: Uint8Array, file: string): { tensors: Map<string, NamedTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new SafetensorsError(file, `too short to be a safetensors file (${bytes.length} bytes)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > bytes.length - 8) {
    throw new SafetensorsError(file, `header length ${headerLength} exceeds the file size (${bytes.length} bytes); the file is truncated or not safetensors`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw new SafetensorsError(file, `header is not JSON (${(error as Error).message})`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new SafetensorsError(file, "header is not a JSON object");
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const tensors = new Map<string, NamedTensor>();
  let metadata = Object.create(null) as Record<string, string>;
  for (const [name, raw] of Object.entries(header)) {
    if (name === "__metadata__") {
      metadata = readMetadata(raw, file);
      continue;
    }
    const parsed = TensorEntry.safeParse(raw);
    if (!parsed.success) throw new SafetensorsError(file, `tensor ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const {
      dtype,
      shape,
      data_offsets: [begin, end],
    } = parsed.data;
    const width = BYTES_PER_ELEMENT[dtype];
    if (width === undefined) throw new SafetensorsError(file, `tensor ${name}: dtype ${dtype} is not supported (F32, F16, BF16, F64)`);
    const size = shape.reduce((a, b) => a * b, 1);
    if (end < begin || end - begin !== size * width) {
      throw new SafetensorsError(file, `tensor ${name}: data_offsets [${begin}, ${end}] do not hold ${size} ${dtype} values (shape [${shape.join(", ")}])`);
    }
    if (end > dataLength) {
      throw new SafetensorsError(file, `tensor ${name}: data_offsets [${begin}, ${end}] do not fit within ${dataLength} data bytes; the file is truncated`);
    }
    tensors.set(name, { shape, data: toFloat32(bytes, dataStart + begin, size, dtype) });
  }
  return { tensors, metadata };
}

/** The header's `__metadata__`, every key kept as data (a zod record would drop a `__proto__` key). */
function readMetadata(raw: unknown, file: string): Record<string, string> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new SafetensorsError(file, "__metadata__ must map strings to strings");
  const metadata = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== "string") throw new SafetensorsError(file, "__metadata__ must map strings to strings");
    metadata[key] = value;
  }
  return metadata;
}

/** Read every tensor of a safetensors file as float32; a missing file is named as such. */
export async function readSafetensors(path: string): Promise<Map<string, NamedTensor>> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CheckpointError(`missing ${path}`, { cause: error });
    throw error;
  }
  return decodeSafetensors(bytes, path).tensors;
}

/** Write tensors as a float32 safetensors file (see `encodeSafetensors`), atomically. */
export function writeSafetensors(path: string, tensors: ReadonlyMap<string, NamedTensor>, metadata?: Record<string, string>): Promise<void> {
  writeFileAtomically(path, encodeSafetensors(tensors, metadata));
  return Promise.resolve();
}

function toFloat32(bytes: Uint8Array, at: number, size: number, dtype: string): Float32Array {
  const out = new Float32Array(size);
  if (dtype === "F32") {
    new Uint8Array(out.buffer).set(bytes.subarray(at, at + size * 4));
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, size * BYTES_PER_ELEMENT[dtype]!);
  if (dtype === "F64") {
    for (let i = 0; i < size; i++) out[i] = view.getFloat64(i * 8, true);
    return out;
  }
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < size; i++) {
    const h = view.getUint16(i * 2, true);
    // A bfloat16 is the top half of a float32, so its bits move over as they are.
    if (dtype === "BF16") bits[i] = h << 16;
    else out[i] = halfToFloat(h);
  }
  return out;
}

/** IEEE 754 half precision (the bits of a float16) to a number. */
export function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? Number.NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function assertLittleEndian(): void {
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    throw new InvariantError("safetensors I/O here assumes a little-endian machine");
  }
}
