import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeSafetensors, encodeSafetensors, halfToFloat, readSafetensors, writeSafetensors } from "./safetensors.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "envace-safetensors-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A safetensors file from a header and the raw bytes of its data section. */
function fileOf(header: Record<string, unknown>, data: ArrayLike<number>): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const bytes = new Uint8Array(8 + json.length + data.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  bytes.set(data, 8 + json.length);
  return bytes;
}

describe("readSafetensors / writeSafetensors", () => {
  it("round-trips float32 tensors through a file", async () => {
    const tensors = new Map([
      ["b", { shape: [2, 2], data: Float32Array.from([1, -2, 3.5, 4]) }],
      ["a", { shape: [3], data: Float32Array.from([0.25, 0, -1]) }],
    ]);
    const path = join(root, "roundtrip.safetensors");
    await writeSafetensors(path, tensors, { format: "pt" });
    const read = await readSafetensors(path);
    expect([...read.keys()].sort()).toEqual(["a", "b"]);
    expect(read.get("b")).toEqual(tensors.get("b"));
    expect(read.get("a")).toEqual(tensors.get("a"));
  });

  it("names a missing file", async () => {
    await expect(readSafetensors(join(root, "nope.safetensors"))).rejects.toThrow(`missing ${join(root, "nope.safetensors")}`);
  });
});

describe("decodeSafetensors", () => {
  it("converts half, bfloat16 and float64 values to float32", () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x3555)).toBeCloseTo(1 / 3, 3);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
    const float64 = new Uint8Array(Float64Array.from([0.5, -1.25]).buffer);
    // bfloat16 1 = 0x3f80, -3 = 0xc040 (little-endian bytes).
    const bytes = fileOf({ b: { dtype: "BF16", shape: [2], data_offsets: [0, 4] }, d: { dtype: "F64", shape: [2], data_offsets: [4, 20] } }, [
      0x80,
      0x3f,
      0x40,
      0xc0,
      ...float64,
    ]);
    const { tensors } = decodeSafetensors(bytes, "mixed.safetensors");
    expect(Array.from(tensors.get("b")!.data)).toEqual([1, -3]);
    expect(Array.from(tensors.get("d")!.data)).toEqual([0.5, -1.25]);
  });

  it("names the file and tensor of an entry whose byte range does not match its shape", () => {
    const bytes = fileOf({ w: { dtype: "F32", shape: [4], data_offsets: [0, 8] } }, new Uint8Array(8));
    expect(() => decodeSafetensors(bytes, "bad.safetensors")).toThrow("bad.safetensors: tensor w: data_offsets [0, 8] do not hold 4 F32 values");
  });

  it("keeps a `__proto__` tensor name and metadata key as data, written and read", () => {
    // The header a file written elsewhere may carry: JSON text, with `__proto__` as an ordinary key.
    const headerText = '{"__metadata__":{"__proto__":"m","format":"pt"},"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}';
    const bytes = fileOf(JSON.parse(headerText) as Record<string, unknown>, new Uint8Array(Float32Array.from([2.5]).buffer));
    const { tensors, metadata } = decodeSafetensors(bytes, "proto.safetensors");
    expect([...tensors.keys()]).toEqual(["__proto__"]);
    expect(Array.from(tensors.get("__proto__")!.data)).toEqual([2.5]);
    expect(Object.keys(metadata)).toEqual(["__proto__", "format"]);
    expect(Object.getOwnPropertyDescriptor(metadata, "__proto__")?.value).toBe("m");
    // Written back, the header holds both keys as text.
    const written = encodeSafetensors(tensors, metadata);
    const length = Number(new DataView(written.buffer).getBigUint64(0, true));
    expect(new TextDecoder().decode(written.subarray(8, 8 + length)).trimEnd()).toBe(headerText);
  });

  it("refuses metadata that does not map strings to strings", () => {
    const bytes = fileOf({ __metadata__: { format: 1 } }, []);
    expect(() => decodeSafetensors(bytes, "meta.safetensors")).toThrow("meta.safetensors: __metadata__ must map strings to strings");
  });

  it("refuses a dtype it cannot convert, naming it", () => {
    const bytes = fileOf({ i: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }, new Uint8Array(8));
    expect(() => decodeSafetensors(bytes, "ints.safetensors")).toThrow("ints.safetensors: tensor i: dtype I64 is not supported");
  });
});
