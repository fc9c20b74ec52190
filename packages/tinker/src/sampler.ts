import { TinkerUsageError } from "./errors.js";
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
      throw new TinkerUsageError("Tinker takes stop strings or stop token ids, not both: clear SamplingParams.stop or the sampler's stopTokenIds");
    }
    const stop = params.stop.length > 0 ? params.stop : this.stopTokenIds.length > 0 ? [...this.stopTokenIds] : undefined;
    const reply = await this.request(
      promptTokens,
      {
        max_tokens: params.maxTokens,
        temperature: params.temperature,
        top_k: params.topK > 0 ? params.topK : -1,
        top_p: params.topP,
        ...(stop ? { stop } : {}),
        ...(params.seed !== undefined ? { seed: params.seed } : {}),
      },
      count,
      false,
      signal,
    );
    return reply.sequences.map((s) => {
      if (s.logprobs?.length !== s.tokens.length) {
        throw new TinkerHttpError(`${API}/asample`, 200, "the server returned no per-token logprobs, which training needs");
      }
      return { tokens: s.tokens, logprobs: s.logprobs, finishReason: s.stop_reason };
    });
  }

  /**
   * The log-probability of each prompt token after the first under the sampler's weights (the
   * SDK's `compute_logprobs`: a one-token sample that asks for `prompt_logprobs`).
   */
  async promptLogprobs(promptTokens: readonly number[], signal?: AbortSignal): Promise<number[]> {
    const reply = await this.request(promptTokens, { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, 1, true, signal);
    const scores = reply.prompt_logprobs ?? [];
    if (scores.length !== promptTokens.length || scores.slice(1).some((x) => x === null)) {
      throw new TinkerHttpError(`${API}/asample`, 200, `the server returned ${scores.length} prompt logprobs for a prompt of ${promptTokens.length} tokens`);
    }
    return scores.slice(1) as number[];
  }

  private async request(promptTokens: readonly number[], samplingParams: Record<string, unknown>, count: number, promptLogprobs: boolean, signal?: AbortSignal): Promise<SampleResponse> {
    const route = `${API}/asample`;
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      num_samples: count,
      prompt: { chunks: [{ type: "encoded_text", tokens: [...promptTokens] }] },
      sampling_params: samplingParams,
      prompt_logprobs: promptLogprobs,
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
    return reply;
  }
}
