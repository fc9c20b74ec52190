import { readFile, writeFile } from "node:fs/promises";
import { z } from "zod";

/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header mapping tensor
 * names to `{dtype, shape, data_offsets}`, then the raw little-endian data.
 */

export interface Float32Tensor {
  shape: number[];
  data: Float32Array;
}

const Entry = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

/** Read every tensor of a safetensors file as float32 (F32, F16, BF16 and F64 are converted). */
export async function readSafetensors(path: string): Promise<Map<string, Float32Tensor>> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`missing ${path}`, { cause: error });
    throw error;
  }
  return parseSafetensors(bytes, path);
}

export function parseSafetensors(bytes: Uint8Array, path = "safetensors"): Map<string, Float32Tensor> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 8) throw new Error(`${path}: not a safetensors file (shorter than its 8-byte header length)`);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.byteLength) throw new Error(`${path}: header length ${headerLength} runs past the end of the file`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`${path}: header is not JSON (${(error as Error).message})`, { cause: error });
  }
  const dataStart = 8 + headerLength;
  const tensors = new Map<string, Float32Tensor>();
  for (const [name, raw] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const parsed = Entry.safeParse(raw);
    if (!parsed.success) throw new Error(`${path}: tensor ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const { dtype, shape, data_offsets: [begin, end] } = parsed.data;
    const width = BYTES[dtype];
    if (width === undefined) throw new Error(`${path}: tensor ${name} has dtype ${dtype}; only F32, F16, BF16 and F64 are supported`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * width || dataStart + end > bytes.byteLength) {
      throw new Error(`${path}: tensor ${name}: data_offsets [${begin}, ${end}] do not hold ${count} ${dtype} values`);
    }
    tensors.set(name, { shape, data: toFloat32(bytes.subarray(dataStart + begin, dataStart + end), dtype, count) });
  }
  return tensors;
}

function toFloat32(raw: Uint8Array, dtype: string, count: number): Float32Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    switch (dtype) {
      case "F32":
        out[i] = view.getFloat32(i * 4, true);
        break;
      case "F64":
        out[i] = view.getFloat64(i * 8, true);
        break;
      case "F16":
        out[i] = halfToFloat(view.getUint16(i * 2, true));
        break;
      case "BF16":
        out[i] = bfloat16ToFloat(view.getUint16(i * 2, true));
        break;
    }
  }
  return out;
}

const bfloatScratch = new DataView(new ArrayBuffer(4));

export function bfloat16ToFloat(bits: number): number {
  bfloatScratch.setUint32(0, bits << 16);
  return bfloatScratch.getFloat32(0);
}

/** IEEE 754 half precision to a JS number. */
export function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? Number.NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Encode float32 tensors as a safetensors file (names sorted, 8-byte aligned data). */
export function encodeSafetensors(tensors: ReadonlyMap<string, Float32Tensor>, metadata?: Record<string, string>): Uint8Array {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = metadata ? { __metadata__: metadata } : {};
  let offset = 0;
  for (const name of names) {
    const tensor = tensors.get(name)!;
    const expected = tensor.shape.reduce((a, b) => a * b, 1);
    if (tensor.data.length !== expected) throw new Error(`tensor ${name}: shape [${tensor.shape.join(", ")}] needs ${expected} values, has ${tensor.data.length}`);
    header[name] = { dtype: "F32", shape: tensor.shape, data_offsets: [offset, offset + tensor.data.byteLength] };
    offset += tensor.data.byteLength;
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces so the data starts 8-byte aligned, as the reference writer does.
  json += " ".repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const name of names) {
    const data = tensors.get(name)!.data;
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    at += data.byteLength;
  }
  return out;
}

export async function writeSafetensors(path: string, tensors: ReadonlyMap<string, Float32Tensor>, metadata?: Record<string, string>): Promise<void> {
  await writeFile(path, encodeSafetensors(tensors, metadata));
}
