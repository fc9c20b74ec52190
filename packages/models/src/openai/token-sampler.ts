import { parseReply } from "@envace/http";
import type { SampledTokens, Sampler, SamplingParams, SamplingParamsInput } from "@envace/protocol";
import { z } from "zod";
import type { ServerCapabilities } from "./capabilities.js";
import { requireTokenRoute, ServerConnection, type ServerConnectionOptions } from "./client.js";
import { TokenDataUnavailableError } from "./errors.js";
import { parseSampling } from "../sampling-params.js";
import { idsFromLabels, samplingFields } from "./wire.js";

export interface ServerTokenSamplerOptions extends ServerConnectionOptions {
  /** The served model id (used by vLLM's `/v1/completions`). */
  model: string;
  /** Fields merged into every request body. */
  extraBody?: Record<string, unknown>;
  connection?: ServerConnection;
}

/**
 * A token-in, token-out `Sampler` on a self-hosted server, so rollouts continue from the exact
 * tokens they sampled instead of re-templating the conversation every turn. The route follows
 * the detected server: vLLM `/v1/completions` with a token-id prompt (`return_token_ids`,
 * `logprobs: 0`, `return_tokens_as_token_ids`), SGLang `/generate` (`input_ids`,
 * `return_logprob`), llama.cpp `/completion` (`return_tokens`, `n_probs`). A server without one
 * (the OpenAI API) fails with `TokenDataUnavailableError` on the first call.
 */
export class ServerTokenSampler implements Sampler {
  readonly connection: ServerConnection;
  readonly #options: ServerTokenSamplerOptions;

  constructor(options: ServerTokenSamplerOptions) {
    this.#options = options;
    this.connection = options.connection ?? new ServerConnection(options);
  }

  async sample(promptTokens: readonly number[], input: SamplingParams | SamplingParamsInput, signal?: AbortSignal): Promise<SampledTokens> {
    if (promptTokens.length === 0) throw new RangeError("sample needs at least one prompt token");
    const params = parseSampling(input);
    const capabilities = await this.connection.capabilities(signal);
    const route = requireTokenRoute(capabilities, this.connection.baseURL);
    switch (route) {
      case "completions":
        return this.#completions(promptTokens, params, capabilities, signal);
      case "sglang-generate":
        return this.#sglang(promptTokens, params, capabilities, signal);
      case "llama.cpp-completion":
        return this.#llamaCpp(promptTokens, params, capabilities, signal);
    }
  }

  async #completions(prompt: readonly number[], params: SamplingParams, capabilities: ServerCapabilities, signal?: AbortSignal): Promise<SampledTokens> {
    const body = {
      model: this.#options.model,
      prompt: [...prompt],
      max_tokens: params.maxTokens,
      ...samplingFields(params, capabilities),
      logprobs: 0,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      ...this.#options.extraBody,
    };
    const url = `${this.connection.baseURL}/completions`;
    const raw = await this.connection.post(url, body, signal);
    const choice = parseReply(CompletionResponse, raw, url).choices[0]!;
    const labels = choice.logprobs?.tokens ?? undefined;
    const tokens = choice.token_ids ?? (labels ? idsFromLabels(labels) : undefined);
    const logprobs = choice.logprobs?.token_logprobs;
    const complete = tokens !== undefined && logprobs?.length === tokens.length && logprobs.every((l) => l !== null);
    if (!complete) {
      throw new TokenDataUnavailableError(
        `${url}: the ${capabilities.kind} server returned ${tokens ? `${tokens.length} token ids` : "no token ids"} and ${logprobs ? `${logprobs.length} logprobs` : "no logprobs"}; ` +
          "training needs one logprob per output token id (vLLM >= 0.10.2 returns both).",
      );
    }
    return { tokens, logprobs, finishReason: finish(choice.finish_reason) };
  }

  async #sglang(prompt: readonly number[], params: SamplingParams, capabilities: ServerCapabilities, signal?: AbortSignal): Promise<SampledTokens> {
    const { seed, ...sampling } = samplingFields(params, capabilities);
    const body = {
      input_ids: [...prompt],
      sampling_params: { max_new_tokens: params.maxTokens, ...sampling, ...(seed === undefined ? {} : { sampling_seed: seed }) },
      return_logprob: true,
      stream: false,
      ...this.#options.extraBody,
    };
    const url = `${this.connection.origin}/generate`;
    const raw = await this.connection.post(url, body, signal);
    const meta = parseReply(SGLangResponse, raw, url).meta_info;
    const entries = meta.output_token_logprobs;
    if (!entries) {
      throw new TokenDataUnavailableError(`${url}: the SGLang server returned no meta_info.output_token_logprobs; training needs them (return_logprob).`);
    }
    const reason = typeof meta.finish_reason === "string" ? meta.finish_reason : meta.finish_reason?.type;
    return { tokens: entries.map((e) => e[1]), logprobs: entries.map((e) => e[0]), finishReason: finish(reason) };
  }

  async #llamaCpp(prompt: readonly number[], params: SamplingParams, capabilities: ServerCapabilities, signal?: AbortSignal): Promise<SampledTokens> {
    const { seed, ...sampling } = samplingFields(params, capabilities);
    const body = {
      prompt: [...prompt],
      n_predict: params.maxTokens,
      ...sampling,
      ...(seed === undefined ? {} : { seed }),
      n_probs: 1,
      return_tokens: true,
      cache_prompt: true,
      ...this.#options.extraBody,
    };
    const url = `${this.connection.origin}/completion`;
    const raw = await this.connection.post(url, body, signal);
    const response = parseReply(LlamaCppResponse, raw, url);
    const probs = response.completion_probabilities;
    const tokens = response.tokens && response.tokens.length > 0 ? response.tokens : probs?.map((p) => p.id);
    const complete = tokens !== undefined && probs?.length === tokens.length && probs.every((p) => p.logprob !== undefined && p.id !== undefined);
    if (!complete) {
      throw new TokenDataUnavailableError(
        `${url}: the llama.cpp server returned no per-token logprobs with ids (completion_probabilities[].{id, logprob}); ` +
          "training needs them — use a llama.cpp build from 2025 or later.",
      );
    }
    const finishReason = response.stop_type === "limit" ? "length" : "stop";
    return { tokens: tokens as number[], logprobs: probs.map((p) => p.logprob!), finishReason };
  }
}

function finish(reason: string | null | undefined): SampledTokens["finishReason"] {
  if (reason === "length") return "length";
  if (reason === "abort") return "abort";
  return "stop";
}

const TokenIds = z.array(z.number().int().nonnegative());

const CompletionResponse = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        finish_reason: z.string().nullish(),
        token_ids: TokenIds.nullish(),
        logprobs: z.looseObject({ tokens: z.array(z.string()).nullish(), token_logprobs: z.array(z.number().nullable()).nullish() }).nullish(),
      }),
    )
    .min(1),
});

const SGLangResponse = z.looseObject({
  meta_info: z.looseObject({
    finish_reason: z.union([z.string(), z.looseObject({ type: z.string() })]).nullish(),
    output_token_logprobs: z.array(z.tuple([z.number(), z.number().int().nonnegative()]).rest(z.unknown())).nullish(),
  }),
});

const LlamaCppResponse = z.looseObject({
  tokens: TokenIds.nullish(),
  stop_type: z.string().nullish(),
  completion_probabilities: z.array(z.looseObject({ id: z.number().int().nonnegative().optional(), logprob: z.number().optional() })).nullish(),
});
