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
      {},
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
   * SDK's `compute_logprobs`: a one-token sample that asks for `prompt_logprobs`). Tinker answers
   * one entry per prompt token with a leading null; SkyRL tx leaves the null out.
   */
  async promptLogprobs(promptTokens: readonly number[], signal?: AbortSignal): Promise<number[]> {
    const reply = await this.request(promptTokens, { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, 1, { prompt_logprobs: true }, signal);
    return alignPromptScores(reply.prompt_logprobs ?? [], promptTokens.length, "prompt logprobs");
  }

  /**
   * The `k` most likely tokens, as [token id, log-probability] pairs best first, at each prompt
   * position after the first (what `topk_prompt_logprobs` asks for), with the prompt's own
   * log-probabilities.
   */
  async topkPromptLogprobs(promptTokens: readonly number[], k: number, signal?: AbortSignal): Promise<{ logprobs: number[]; topk: [number, number][][] }> {
    if (!Number.isInteger(k) || k < 1) throw new TinkerUsageError(`topkPromptLogprobs: k must be a positive integer, got ${k}`);
    const reply = await this.request(
      promptTokens,
      { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 },
      1,
      { prompt_logprobs: true, topk_prompt_logprobs: k },
      signal,
    );
    const logprobs = alignPromptScores(reply.prompt_logprobs ?? [], promptTokens.length, "prompt logprobs");
    const topk = alignPromptScores(reply.topk_prompt_logprobs ?? [], promptTokens.length, "top-k prompt logprobs");
    const tooMany = topk.findIndex((row) => row.length > k);
    if (tooMany >= 0)
      throw new TinkerHttpError(
        `${API}/asample`,
        200,
        `the server returned ${topk[tooMany]!.length} top-k entries at prompt position ${tooMany + 1}, more than k = ${k}`,
      );
    return { logprobs, topk: topk.map((row) => row.map(([token, lp]) => [token, lp] as [number, number])) };
  }

  private async request(
    promptTokens: readonly number[],
    samplingParams: Record<string, unknown>,
    count: number,
    scoring: { prompt_logprobs?: boolean; topk_prompt_logprobs?: number },
    signal?: AbortSignal,
  ): Promise<SampleResponse> {
    const route = `${API}/asample`;
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      num_samples: count,
      prompt: { chunks: [{ type: "encoded_text", tokens: [...promptTokens] }] },
      sampling_params: samplingParams,
      prompt_logprobs: scoring.prompt_logprobs ?? false,
      topk_prompt_logprobs: scoring.topk_prompt_logprobs ?? 0,
      type: "sample",
    };
    const headers = { "X-Tinker-Sampling-Backpressure": "1" };
    const send = async () => this.http.parse(route, await this.http.post(route, body, signal, headers), UntypedFuture).request_id;
    const requestId = await send();
    // SDK 0.25 takes sample results only as protobuf; older servers answer JSON.
    const result = await retrieveFuture(this.http, requestId, {
      resubmit: send,
      requestType: "Sample",
      accept: `${PROTOBUF}, application/json`,
      ...(signal ? { signal } : {}),
    });
    const reply = this.http.parse(route, result instanceof Uint8Array ? decodeSampleResponse(result) : result, SampleResponse);
    if (reply.sequences.length !== count) throw new TinkerHttpError(route, 200, `${reply.sequences.length} sequences for ${count} samples`);
    return reply;
  }
}

/**
 * Per-position prompt scores for the positions after the first: Tinker sends one entry per prompt
 * token with a leading null (nothing predicts the first token), SkyRL tx sends the n − 1 scored
 * positions only. Either shape is accepted; any other length, or a null past the first, is refused.
 */
export function alignPromptScores<T>(scores: readonly (T | null)[], promptLength: number, what: string): T[] {
  const scored = scores.length === promptLength ? scores.slice(1) : scores.length === promptLength - 1 ? scores : undefined;
  const gap = scored?.findIndex((x) => x === null) ?? -1;
  if (!scored || gap >= 0) {
    const problem = scored ? `a null at prompt position ${gap + 1}` : `${scores.length} entries`;
    throw new TinkerHttpError(
      `${API}/asample`,
      200,
      `the server returned ${what} with ${problem} for a prompt of ${promptLength} tokens (expected ${promptLength} with a leading null, or ${promptLength - 1})`,
    );
  }
  return scored as T[];
}
