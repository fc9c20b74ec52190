import {
  readGenerateRequest,
  type GenerateRequest,
  type GenerateRequestInput,
  type Generation,
  type GenerationDelta,
  type SampledTokens,
  type Sampler,
  type SamplingParams,
  type StreamingPolicy,
} from "@envace/protocol";
import type { TokenListener } from "@envace/training";
import { SamplerPolicy, type SamplerPolicyOptions } from "@envace/trajectory";
import { TokenTextStream } from "./text-stream.js";
import { EnvaceError } from "@envace/errors";

/** A local sampler that reports each token as it is sampled (`TinySampler`, `OnnxSampler`). */
export interface TokenStreamingSampler extends Sampler {
  sample(promptTokens: readonly number[], params: SamplingParams, signal?: AbortSignal, onToken?: TokenListener): Promise<SampledTokens>;
}

/** The decoded text of a finished generation does not extend the increments already streamed. */
export class StreamedTextMismatchError extends EnvaceError {
  override readonly code = "streamed-text-mismatch";
}

/**
 * A `SamplerPolicy` on a local sampler that also streams: `generateStream` hands on the decoded
 * text as tokens are sampled (whole characters only), and resolves with the same generation
 * `generate` returns for the same request and seed. Aborting `signal` stops the sampling.
 */
export class StreamingSamplerPolicy extends SamplerPolicy implements StreamingPolicy {
  readonly #streamer: TokenStreamingSampler;

  constructor(options: SamplerPolicyOptions & { sampler: TokenStreamingSampler }) {
    super(options);
    this.#streamer = options.sampler;
  }

  async generateStream(input: GenerateRequest | GenerateRequestInput, onDelta: (delta: GenerationDelta) => void, signal?: AbortSignal): Promise<Generation> {
    const request = readGenerateRequest(input, { file: `${this.id} stream request` });
    const text = new TokenTextStream(this.tokenizer);
    const onToken: TokenListener = (token) => {
      const piece = text.push(token);
      if (piece.length > 0) onDelta({ content: piece });
    };
    // The same rendering and decoding as `generate`, on a sampler that reports its tokens.
    const sampler: Sampler = { sample: (prompt, params, s) => this.#streamer.sample(prompt, params, s, onToken) };
    const once = new SamplerPolicy({
      id: this.id,
      sampler,
      tokenizer: this.tokenizer,
      template: this.renderer.template,
      templateVariables: this.renderer.variables,
    });
    const generation = await once.generate(request, signal);
    const rest = text.finish(generation.text);
    if (rest === undefined) throw new StreamedTextMismatchError(`${this.id}: the decoded output does not extend the text already streamed`);
    if (rest.length > 0) onDelta({ content: rest });
    return generation;
  }
}
