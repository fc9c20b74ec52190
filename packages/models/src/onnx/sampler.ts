import { ContextLengthError, type SampledTokens, type Sampler, type SamplingParams, type SamplingParamsInput, type Tokenizer } from "@envace/protocol";
import { sampleToken, seededRandom, type TokenListener } from "@envace/training";
import { parseSampling } from "../sampling-params.js";
import type { KvCache, OnnxCausalLM } from "./causal-lm.js";
import { ModelCapabilityError } from "../openai/wire.js";

export interface OnnxSamplerOptions {
  /** Token ids that end a generation (kept as the last output token). */
  stopTokenIds: readonly number[];
  /** Needed only for `stop` strings. */
  tokenizer?: Tokenizer;
  /** Longest sequence (prompt + output) the model accepts; generation ends with `length` there. */
  maxContext?: number;
  /** Memory for reusing the caches of earlier sequences that share a prefix. 0 turns it off. Default 256 MiB. */
  prefixCacheBytes?: number;
}

interface CacheEntry {
  /** Tokens whose positions the cache holds. */
  tokens: readonly number[];
  cache: KvCache;
  weightsVersion: number;
}

/**
 * A `Sampler` on an `OnnxCausalLM`: one prefill of the prompt, then one cached step per token.
 * Temperature, top-p, top-k and a seed apply as in `sampleToken`; each logprob is that of the
 * distribution the token was drawn from. Multi-turn rollouts re-send their whole conversation;
 * the caches of recent sequences are kept, so a prompt that extends one only prefills the new
 * tokens. `onToken` sees each token as it is sampled. An abort ends the generation with what was
 * sampled and `finishReason: "abort"`. A generation under way when the weights are replaced
 * finishes on the weights it started with.
 */
export class OnnxSampler implements Sampler {
  readonly model: OnnxCausalLM;
  readonly #options: OnnxSamplerOptions;
  readonly #stops: Set<number>;
  readonly #recent: CacheEntry[] = [];
  #seedCounter = 0;
  /** Prompt positions served from the prefix cache, and prefilled, since creation. */
  readonly stats = { reusedTokens: 0, prefilledTokens: 0, sampledTokens: 0 };

  constructor(model: OnnxCausalLM, options: OnnxSamplerOptions) {
    this.model = model;
    this.#options = options;
    this.#stops = new Set(options.stopTokenIds);
  }

  async sample(
    promptTokens: readonly number[],
    input: SamplingParams | SamplingParamsInput,
    signal?: AbortSignal,
    onToken?: TokenListener,
  ): Promise<SampledTokens> {
    if (promptTokens.length === 0) throw new RangeError("sample needs at least one prompt token");
    const params = parseSampling(input);
    const maxContext = this.#options.maxContext ?? Infinity;
    if (promptTokens.length >= maxContext) throw new ContextLengthError(promptTokens.length, maxContext);
    const random = seededRandom(params.seed ?? Date.now() ^ (this.#seedCounter++ * 0x9e3779b9));
    const { cache: start, reused } = this.#lookup(promptTokens);
    this.stats.reusedTokens += reused;
    this.stats.prefilledTokens += promptTokens.length - reused;
    let { logits, cache } = await this.model.forward(promptTokens.slice(reused), start);
    const tokens: number[] = [];
    const logprobs: number[] = [];
    const stopStrings = params.stop;
    const tail = stopStrings.length > 0 ? Math.max(...stopStrings.map((s) => s.length)) + 8 : 0;
    let finishReason: SampledTokens["finishReason"] = "length";
    const weightsVersion = this.model.weightsVersion;
    while (tokens.length < params.maxTokens) {
      if (signal?.aborted) {
        finishReason = "abort";
        break;
      }
      const drawn = sampleToken(logits, params, random);
      tokens.push(drawn.token);
      logprobs.push(drawn.logprob);
      onToken?.(drawn.token, drawn.logprob);
      if (this.#stops.has(drawn.token) || this.#hitsStopString(tokens, stopStrings, tail)) {
        finishReason = "stop";
        break;
      }
      if (tokens.length >= params.maxTokens || promptTokens.length + tokens.length >= maxContext) break;
      ({ logits, cache } = await this.model.forward([drawn.token], cache));
    }
    this.stats.sampledTokens += tokens.length;
    // The cache holds the prompt and the sampled tokens that were run (usually all but the last).
    if (this.model.weightsVersion === weightsVersion) this.#remember([...promptTokens, ...tokens].slice(0, cache.length), cache);
    return { tokens, logprobs, finishReason };
  }

  /** Forget cached sequences (also happens by itself when the model's weights change). */
  clearCache(): void {
    this.#recent.length = 0;
  }

  #hitsStopString(tokens: readonly number[], stops: readonly string[], tail: number): boolean {
    if (stops.length === 0) return false;
    const tokenizer = this.#options.tokenizer;
    if (!tokenizer) throw new ModelCapabilityError("stop strings need the sampler to have a tokenizer");
    const text = tokenizer.decode(tokens.slice(-tail));
    return stops.some((stop) => text.includes(stop));
  }

  #lookup(prompt: readonly number[]): { cache: KvCache | undefined; reused: number } {
    let best: CacheEntry | undefined;
    let bestLength = 0;
    for (const entry of this.#recent) {
      if (entry.weightsVersion !== this.model.weightsVersion) continue;
      const limit = Math.min(entry.tokens.length, prompt.length - 1);
      let shared = 0;
      while (shared < limit && entry.tokens[shared] === prompt[shared]) shared++;
      if (shared > bestLength) {
        best = entry;
        bestLength = shared;
      }
    }
    if (!best) return { cache: undefined, reused: 0 };
    // Most recently used last, so eviction drops the stalest.
    this.#recent.splice(this.#recent.indexOf(best), 1);
    this.#recent.push(best);
    return { cache: this.model.truncateCache(best.cache, bestLength), reused: bestLength };
  }

  #remember(tokens: number[], cache: KvCache): void {
    const budget = this.#options.prefixCacheBytes ?? 256 * 2 ** 20;
    const perToken = this.model.cacheBytesPerToken;
    if (tokens.length * perToken > budget) return;
    this.#recent.push({ tokens, cache, weightsVersion: this.model.weightsVersion });
    let used = this.#recent.reduce((sum, entry) => sum + entry.tokens.length * perToken, 0);
    while (used > budget) used -= this.#recent.shift()!.tokens.length * perToken;
  }
}
