/**
 * TensorBoard event files, scalars only: TFRecord framing (length, masked CRC32C of the length,
 * data, masked CRC32C of the data) around `Event` protocol buffers whose `Summary` carries
 * `simple_value`s. No maintained Node library writes these, and the format is small enough to
 * write here; a test reads the files back with TensorBoard's own Python reader.
 *
 * Field numbers (tensorflow/core/util/event.proto, summary.proto): Event.wall_time = 1 (double),
 * step = 2 (int64), file_version = 3 (string), summary = 5; Summary.value = 1; Value.tag = 1
 * (string), simple_value = 2 (float).
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    // The Castagnoli polynomial, reflected.
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotated right by 15 bits, plus a constant. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord: uint64 length, its masked CRC, the data, the data's masked CRC (all little-endian). */
export function tfRecord(data: Uint8Array): Buffer {
  const header = Buffer.alloc(8);
  header.writeBigUInt64LE(BigInt(data.length));
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  header.copy(out, 0);
  out.writeUInt32LE(maskedCrc32c(header), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

function varint(value: bigint): number[] {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  while (v >= 0x80n) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return bytes;
}

function lengthDelimited(field: number, payload: Uint8Array): number[] {
  return [...varint(BigInt((field << 3) | 2)), ...varint(BigInt(payload.length)), ...payload];
}

/** A `Summary.Value` with a tag and a float `simple_value`. */
function scalarValue(tag: string, value: number): Uint8Array {
  const float = Buffer.alloc(4);
  float.writeFloatLE(value);
  return Uint8Array.from([...lengthDelimited(1, Buffer.from(tag, "utf8")), (2 << 3) | 5, ...float]);
}

/** An `Event`: wall time, step, and either the file version or a summary of scalars. */
export function eventBytes(event: { wallTime: number; step: number; fileVersion?: string; scalars?: readonly (readonly [string, number])[] }): Uint8Array {
  const wall = Buffer.alloc(8);
  wall.writeDoubleLE(event.wallTime);
  const bytes = [(1 << 3) | 1, ...wall, ...varint((2n << 3n) | 0n), ...varint(BigInt(event.step))];
  if (event.fileVersion !== undefined) bytes.push(...lengthDelimited(3, Buffer.from(event.fileVersion, "utf8")));
  if (event.scalars !== undefined) {
    const summary = event.scalars.flatMap(([tag, value]) => lengthDelimited(1, scalarValue(tag, value)));
    bytes.push(...lengthDelimited(5, Uint8Array.from(summary)));
  }
  return Uint8Array.from(bytes);
}

/**
 * An event file in `dir` (`events.out.tfevents.<seconds>.<host>`, the name TensorBoard looks
 * for), opened with its file-version event. Each `scalars` call appends one event in one write,
 * so a crash can cut short only the last, which TensorBoard's reader stops at.
 */
export class EventFileWriter {
  readonly path: string;

  constructor(dir: string, now: () => number = Date.now) {
    this.now = now;
    mkdirSync(dir, { recursive: true });
    const started = now();
    this.path = join(dir, `events.out.tfevents.${Math.floor(started / 1000)}.${hostname()}.${process.pid}`);
    appendFileSync(this.path, tfRecord(eventBytes({ wallTime: started / 1000, step: 0, fileVersion: "brain.Event:2" })));
  }

  private readonly now: () => number;

  scalars(step: number, scalars: readonly (readonly [string, number])[]): void {
    if (scalars.length === 0) return;
    appendFileSync(this.path, tfRecord(eventBytes({ wallTime: this.now() / 1000, step, scalars })));
  }
}
