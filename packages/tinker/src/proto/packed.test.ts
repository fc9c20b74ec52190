import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TensorData, WireDatum } from "../wire.js";
import { decodeForwardBackwardRequest, encodeForwardBackwardRequest } from "./codec.js";
import { readInt64s } from "./packed.js";
import { referenceDecodeForwardBackwardRequest, referenceEncodeForwardBackwardRequest } from "./reference.js";

const float32 = (x: number) => Math.fround(x);
const arbFloats = (n: number) => fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }).map(float32), { minLength: n, maxLength: n });
const arbInts = (n: number) => fc.array(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), { minLength: n, maxLength: n });

const arbDatum: fc.Arbitrary<WireDatum> = fc.integer({ min: 0, max: 12 }).chain((n) =>
  fc.record({
    tokens: fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: n, maxLength: n }),
    targets: arbInts(n),
    logprobs: arbFloats(n),
    shape: fc.boolean(),
    sparse: fc.boolean(),
  }).map(({ tokens, targets, logprobs, shape, sparse }) => {
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
          expect(inputs.map((i) => i.target_tokens!.data)).toEqual(data.map((d) => d.loss_fn_inputs.target_tokens!.data));
          expect(inputs.map((i) => i.logprobs!.data)).toEqual(data.map((d) => d.loss_fn_inputs.logprobs!.data));
          expect(decoded.forwardOnly).toBe(forwardOnly);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads int64 two's complement exactly (hand-written bytes)", () => {
    const bytes = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0]);
    expect(readInt64s(bytes)).toEqual([-1, 2 ** 32, 5]);
  });
});
