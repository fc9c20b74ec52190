import type { SampledTokens, Sampler, SamplingParams } from "@envace/protocol";
import { TinkerHttpError } from "./errors.js";
import { retrieveFuture } from "./futures.js";
import type { TinkerHttp } from "./http.js";
import { decodeSampleResponse } from "./proto/codec.js";
import { PROTOBUF } from "./proto/schema.js";
import { SampleResponse, UntypedFuture } from "./wire.js";

const API = "/api/v1";

/** A `Sampler` over one sampling session of a Tinker server. */
export class TinkerSampler implements Sampler {
  private seq = 0;

  constructor(
    private readonly http: TinkerHttp,
    readonly samplingSessionId: string,
    /** The `tinker://` path of the weights, when they were saved under a name. */
    readonly modelPath: string | null,
    private readonly stopTokenIds: readonly number[] = [],
  ) {}

  async sample(promptTokens: readonly number[], params: SamplingParams, signal?: AbortSignal): Promise<SampledTokens> {
    const [first] = await this.sampleMany(promptTokens, params, 1, signal);
    return first!;
  }

  /** `count` independent samples of one prompt in one request (a GRPO group). */
  async sampleMany(promptTokens: readonly number[], params: SamplingParams, count: number, signal?: AbortSignal): Promise<SampledTokens[]> {
    if (params.stop.length > 0 && this.stopTokenIds.length > 0) {
      throw new Error("Tinker takes stop strings or stop token ids, not both: clear SamplingParams.stop or the sampler's stopTokenIds");
    }
    const stop = params.stop.length > 0 ? params.stop : this.stopTokenIds.length > 0 ? [...this.stopTokenIds] : undefined;
    const route = `${API}/asample`;
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      num_samples: count,
      prompt: { chunks: [{ type: "encoded_text", tokens: [...promptTokens] }] },
      sampling_params: {
        max_tokens: params.maxTokens,
        temperature: params.temperature,
        top_k: params.topK > 0 ? params.topK : -1,
        top_p: params.topP,
        ...(stop ? { stop } : {}),
        ...(params.seed !== undefined ? { seed: params.seed } : {}),
      },
      prompt_logprobs: false,
      topk_prompt_logprobs: 0,
      type: "sample",
    };
    const headers = { "X-Tinker-Sampling-Backpressure": "1" };
    const send = async () => this.http.parse(route, await this.http.post(route, body, signal, headers), UntypedFuture).request_id;
    const requestId = await send();
    // SDK 0.25 takes sample results only as protobuf; older servers answer JSON.
    const result = await retrieveFuture(this.http, requestId, { resubmit: send, requestType: "Sample", accept: `${PROTOBUF}, application/json`, ...(signal ? { signal } : {}) });
    const reply = this.http.parse(route, result instanceof Uint8Array ? decodeSampleResponse(result) : result, SampleResponse);
    if (reply.sequences.length !== count) throw new TinkerHttpError(route, 200, `${reply.sequences.length} sequences for ${count} samples`);
    return reply.sequences.map((s) => {
      if (s.logprobs?.length !== s.tokens.length) {
        throw new TinkerHttpError(route, 200, "the server returned no per-token logprobs, which training needs");
      }
      return { tokens: s.tokens, logprobs: s.logprobs, finishReason: s.stop_reason };
    });
  }
}
