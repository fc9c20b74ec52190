import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TensorData, WireDatum } from "../wire.js";
import { decodeForwardBackwardRequest, encodeForwardBackwardRequest } from "./codec.js";
import { toWireDatum } from "../datum.js";
import { readInt64s } from "./packed.js";
import { referenceDecodeForwardBackwardRequest, referenceEncodeForwardBackwardRequest } from "./reference.js";

const float32 = (x: number) => Math.fround(x);
const arbFloats = (n: number) => fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }).map(float32), { minLength: n, maxLength: n });
const arbInts = (n: number) => fc.array(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), { minLength: n, maxLength: n });

const arbDatum: fc.Arbitrary<WireDatum> = fc.integer({ min: 0, max: 12 }).chain((n) =>
  fc
    .record({
      tokens: fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: n, maxLength: n }),
      targets: arbInts(n),
      logprobs: arbFloats(n),
      shape: fc.boolean(),
      sparse: fc.boolean(),
    })
    .map(({ tokens, targets, logprobs, shape, sparse }) => {
      const inputs: Record<string, TensorData> = {
        target_tokens: { data: targets, dtype: "int64", ...(shape ? { shape: [n] } : {}) },
        logprobs: { data: logprobs, dtype: "float32", ...(shape ? { shape: [n] } : {}) },
      };
      if (sparse) inputs.weights = { data: [0.5], dtype: "float32", shape: [1, 3], sparse_crow_indices: [0, 1], sparse_col_indices: [2] };
      return { model_input: { chunks: [{ type: "encoded_text" as const, tokens }] }, loss_fn_inputs: inputs };
    }),
);

describe("the packed-array forward_backward writer", () => {
  it("writes the bytes of protobufjs's generic writer, and the decoder reads back what was written", () => {
    fc.assert(
      fc.property(
        fc.array(arbDatum, { maxLength: 4 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.option(fc.dictionary(fc.constantFrom("clip_low_threshold", "clip_high_threshold", "beta"), fc.double({ noNaN: true })), { nil: null }),
        fc.boolean(),
        fc.constantFrom("", "model_a", "session-1:train:0"),
        (data, seq, config, forwardOnly, modelId) => {
          const body = { model_id: modelId, seq_id: seq, data, loss_fn: "ppo", loss_fn_config: config, forward_only: forwardOnly };
          const fast = encodeForwardBackwardRequest(body);
          expect(Buffer.from(fast).toString("hex")).toBe(Buffer.from(referenceEncodeForwardBackwardRequest(body)).toString("hex"));
          const back = referenceDecodeForwardBackwardRequest(fast);
          expect(back.data.map((d) => d.tokens)).toEqual(data.map((d) => (d.model_input.chunks[0] as { tokens: number[] }).tokens));
          const decoded = decodeForwardBackwardRequest(fast);
          const inputs = (decoded.body.forward_backward_input as { data: WireDatum[] }).data.map((d) => d.loss_fn_inputs);
          expect(inputs.map((i) => Array.from(i.target_tokens!.data))).toEqual(data.map((d) => d.loss_fn_inputs.target_tokens!.data));
          expect(inputs.map((i) => Array.from(i.logprobs!.data))).toEqual(data.map((d) => d.loss_fn_inputs.logprobs!.data));
          // The same values given as typed arrays write the same bytes.
          const typed = data.map((d) => ({
            ...d,
            loss_fn_inputs: Object.fromEntries(
              Object.entries(d.loss_fn_inputs).map(([name, td]) => [
                name,
                { ...td, data: td.dtype === "int64" ? Float64Array.from(td.data) : Float32Array.from(td.data) },
              ]),
            ),
            model_input: { chunks: d.model_input.chunks.map((c) => (c.type === "encoded_text" ? { ...c, tokens: Int32Array.from(c.tokens) } : c)) },
          }));
          expect(Buffer.from(encodeForwardBackwardRequest({ ...body, data: typed })).toString("hex")).toBe(Buffer.from(fast).toString("hex"));
          expect(decoded.forwardOnly).toBe(forwardOnly);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads int64 two's complement exactly (hand-written bytes)", () => {
    const bytes = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(readInt64s(bytes))).toEqual([-1, 2 ** 32, 5]);
  });

  it("decodes packed fields as typed arrays over the body's own bytes where they are aligned, and as aligned copies where not", () => {
    const body = {
      model_id: "m",
      seq_id: 1,
      loss_fn: "ppo",
      data: [toWireDatum([1, 2, 3], { target_tokens: [2, 3, 4], logprobs: [-0.5, -0.25, -2], advantages: [1, 0, -1] })],
    };
    const bytes = encodeForwardBackwardRequest(body);
    // Shift the body to every offset modulo 8, so every field is aligned at some shift and misaligned at others.
    for (let shift = 0; shift < 8; shift++) {
      const room = new Uint8Array(bytes.length + shift);
      room.set(bytes, shift);
      const shifted = room.subarray(shift);
      const datum = (decodeForwardBackwardRequest(shifted).body.forward_backward_input as { data: WireDatum[] }).data[0]!;
      const tokens = (datum.model_input.chunks[0] as { tokens: Int32Array }).tokens;
      const logprobs = datum.loss_fn_inputs.logprobs!.data as Float32Array;
      expect(tokens).toBeInstanceOf(Int32Array);
      expect(Array.from(tokens)).toEqual([1, 2, 3]);
      expect(logprobs).toBeInstanceOf(Float32Array);
      expect(Array.from(logprobs)).toEqual([-0.5, -0.25, -2]);
      expect(Array.from(datum.loss_fn_inputs.target_tokens!.data)).toEqual([2, 3, 4]);
      // In place when the field starts at a multiple of 4 in its buffer, a copy otherwise.
      const at = room.byteOffset + shift + indexOf(bytes, logprobs);
      expect(logprobs.buffer === room.buffer).toBe(at % 4 === 0);
      if (at % 4 === 0) expect(logprobs.byteOffset).toBe(at);
    }
  });
});

/** Where the bytes of `values` begin in `body`. */
function indexOf(body: Uint8Array, values: Float32Array): number {
  return Buffer.from(body).indexOf(Buffer.from(values.buffer, values.byteOffset, values.byteLength));
}
