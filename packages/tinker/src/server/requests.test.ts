import { describe, expect, it } from "vitest";
import { fromWireDatum, WireDatumError } from "../datum.js";
import { ForwardBackwardRequest, type WireDatum } from "../wire.js";
import { TinkerApiError } from "./options.js";
import { fingerprint, parseBody } from "./requests.js";

/** A datum as the protobuf decoder gives it: typed arrays, int64 values as doubles. */
function typedDatum(logprobs: number[]): WireDatum {
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: Int32Array.from([5, 6, 7]) }] },
    loss_fn_inputs: {
      target_tokens: { data: Float64Array.from([6, 7, 8]), dtype: "int64" },
      logprobs: { data: Float32Array.from(logprobs), dtype: "float32" },
      advantages: { data: Float32Array.from([0, 1, -1]), dtype: "float32" },
    },
  };
}

describe("typed-array request bodies", () => {
  it("become the plain arrays of a Datum, with the same values", () => {
    const datum = fromWireDatum(typedDatum([-0.5, -1, -2]), 0, "importance_sampling");
    expect(datum).toEqual({ tokens: [5, 6, 7], targetTokens: [6, 7, 8], logprobs: [-0.5, -1, -2], advantages: [0, 1, -1], mask: [1, 1, 1] });
    expect(Array.isArray(datum.tokens) && Array.isArray(datum.logprobs)).toBe(true);
  });

  it("name the first value that is not finite", () => {
    expect(() => fromWireDatum(typedDatum([-0.5, Number.NaN, -2]), 3, "importance_sampling")).toThrow(WireDatumError);
    expect(() => fromWireDatum(typedDatum([-0.5, Number.NaN, -2]), 3, "importance_sampling")).toThrow(
      "data[3].loss_fn_inputs.logprobs[1]: is not a finite number",
    );
  });

  it("refuse negative token ids in an Int32Array at parse time, naming the field", () => {
    const datum = typedDatum([0, 0, 0]);
    const body = {
      model_id: "m",
      seq_id: 1,
      forward_backward_input: { loss_fn: "ppo", data: [{ ...datum, model_input: { chunks: [{ type: "encoded_text", tokens: Int32Array.from([1, -4]) }] } }] },
    };
    expect(() => parseBody(ForwardBackwardRequest, body, "forward_backward")).toThrow(TinkerApiError);
    expect(() => parseBody(ForwardBackwardRequest, body, "forward_backward")).toThrow(/forward_backward_input\.data\[0\]\.model_input\.chunks\[0\]\.tokens/);
  });

  it("fingerprint by their bytes: equal values are one request, a changed value another", () => {
    const body = (logprobs: number[]) => ({ model_id: "m", seq_id: 1, forward_backward_input: { loss_fn: "ppo", data: [typedDatum(logprobs)] } });
    expect(fingerprint(body([-0.5, -1, -2]))).toBe(fingerprint(body([-0.5, -1, -2])));
    expect(fingerprint(body([-0.5, -1, -2]))).not.toBe(fingerprint(body([-0.5, -1, -2.5])));
    // The same bytes in another field are another request.
    const moved = body([-0.5, -1, -2]);
    const inputs = moved.forward_backward_input.data[0]!.loss_fn_inputs;
    [inputs.logprobs, inputs.advantages] = [inputs.advantages!, inputs.logprobs!];
    expect(fingerprint(moved)).not.toBe(fingerprint(body([-0.5, -1, -2])));
  });
});
