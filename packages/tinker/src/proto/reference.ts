import type { ForwardBackwardBody } from "./codec.js";
import { WireEncodingError } from "../errors.js";
import type { TensorData } from "../wire.js";
import { DType, messageType } from "./schema.js";

/**
 * The `forward_backward` encoder built on protobufjs's generic message writer, as this package had it
 * before the packed-array writer of `codec.ts`: an independent implementation of the same bytes,
 * kept for the tests (which compare the two) and for `pnpm bench` (before and after, in one run).
 */

type Message = Record<string, unknown>;

function int32Bytes(values: ArrayLike<number>): Uint8Array {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeInt32LE(values[i]!, i * 4);
  return out;
}

function int64Bytes(values: ArrayLike<number>): Uint8Array {
  const out = Buffer.alloc(values.length * 8);
  for (let i = 0; i < values.length; i++) out.writeBigInt64LE(BigInt(Math.trunc(values[i]!)), i * 8);
  return out;
}

function float32Bytes(values: ArrayLike<number>): Uint8Array {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeFloatLE(values[i]!, i * 4);
  return out;
}

function tensorToProto(td: TensorData): Message {
  const dtype = td.dtype ?? (Array.from(td.data).every(Number.isInteger) ? "int64" : "float32");
  const encode = dtype === "int64" ? int64Bytes : float32Bytes;
  const msg: Message = {};
  if (td.sparse_crow_indices !== undefined && td.sparse_col_indices !== undefined) {
    msg.sparse_csr = {
      values: encode(td.data),
      crow_indices: int64Bytes(td.sparse_crow_indices),
      col_indices: int64Bytes(td.sparse_col_indices),
    };
  } else {
    msg.dense = encode(td.data);
  }
  msg.dtype = dtype === "int64" ? DType.INT64 : DType.FLOAT32;
  if (td.shape !== undefined && td.shape.length > 0) msg.shape = td.shape;
  return msg;
}

export function referenceEncodeForwardBackwardRequest(body: ForwardBackwardBody): Uint8Array {
  const msg: Message = {};
  if (body.model_id) msg.model_id = body.model_id;
  if (body.seq_id) msg.seq_id = body.seq_id;
  msg.data = body.data.map((datum) => ({
    model_input: datum.model_input.chunks.map((chunk) => {
      if (chunk.type !== "encoded_text") throw new WireEncodingError(`chunk type "${chunk.type}" has no protobuf encoding here`);
      return { encoded_text: chunk.tokens.length > 0 ? { tokens: int32Bytes(chunk.tokens) } : {} };
    }),
    loss_fn_inputs: Object.fromEntries(Object.entries(datum.loss_fn_inputs).map(([name, td]) => [name, tensorToProto(td)])),
  }));
  if (body.loss_fn) msg.loss_fn = body.loss_fn;
  if (body.loss_fn_config && Object.keys(body.loss_fn_config).length > 0) msg.loss_fn_config = body.loss_fn_config;
  if (body.forward_only) msg.forward_only = true;
  const type = messageType("ForwardBackwardRequest");
  return type.encode(type.fromObject(msg)).finish();
}

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

interface DecodedTensor {
  dense?: Uint8Array;
  dtype: number;
  shape: (number | { toNumber(): number })[];
}

/** The decoder as it was: protobufjs's message reader, then element by element through Buffer reads. */
export function referenceDecodeForwardBackwardRequest(bytes: Uint8Array): { data: { tokens: number[]; inputs: Record<string, number[]> }[] } {
  const msg = messageType("ForwardBackwardRequest").decode(bytes) as unknown as {
    data: { model_input: { encoded_text?: { tokens: Uint8Array } }[]; loss_fn_inputs: Record<string, DecodedTensor> }[];
  };
  const int32s = (b: Uint8Array) => Array.from({ length: Math.floor(b.length / 4) }, (_, i) => view(b).readInt32LE(i * 4));
  const float32s = (b: Uint8Array) => Array.from({ length: Math.floor(b.length / 4) }, (_, i) => view(b).readFloatLE(i * 4));
  const int64s = (b: Uint8Array) => Array.from({ length: Math.floor(b.length / 8) }, (_, i) => Number(view(b).readBigInt64LE(i * 8)));
  return {
    data: msg.data.map((d) => ({
      tokens: d.model_input.flatMap((c) => (c.encoded_text ? int32s(c.encoded_text.tokens) : [])),
      inputs: Object.fromEntries(
        Object.entries(d.loss_fn_inputs).map(([name, t]) => [
          name,
          t.dtype === DType.INT64 ? int64s(t.dense ?? new Uint8Array()) : float32s(t.dense ?? new Uint8Array()),
        ]),
      ),
    })),
  };
}
