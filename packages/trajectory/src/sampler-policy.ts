import { InvariantError } from "@envace/errors";
import type { Generation, GenerateRequest, Message, Policy, Sampler, Tokenizer, ToolSpec } from "@envace/protocol";
import type { ChatTemplate } from "./chat-template.js";
import { IncrementalRenderer, type TokenContinuation } from "./incremental.js";

export interface SamplerPolicyOptions {
  /** A stable name for logs, e.g. `onnx:qwen3-0.6b`. */
  id: string;
  sampler: Sampler;
  tokenizer: Tokenizer;
  template: ChatTemplate;
  /** Extra chat-template variables for every prompt, e.g. `{ enable_thinking: false }`. */
  templateVariables?: Readonly<Record<string, unknown>>;
}

/**
 * Turns a token-level `Sampler` into a `Policy`: renders the chat template, samples, decodes.
 *
 * A request that carries `promptTokens` is sampled from those exact tokens; otherwise the messages
 * are rendered in full. `continuePrompt` extends a previous generation token-exactly (see
 * `IncrementalRenderer`), which is how the rollout engine keeps sampled ids across turns.
 *
 * The returned `text` is the decoded output without a trailing stop token; `outputTokens` keep it.
 */
export class SamplerPolicy implements Policy, TokenContinuation {
  readonly id: string;
  readonly sampler: Sampler;
  readonly tokenizer: Tokenizer;
  readonly renderer: IncrementalRenderer;

  constructor(options: SamplerPolicyOptions) {
    this.id = options.id;
    this.sampler = options.sampler;
    this.tokenizer = options.tokenizer;
    this.renderer = new IncrementalRenderer(options.template, options.tokenizer, options.templateVariables);
  }

  async generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
    const promptTokens = request.promptTokens ?? this.renderer.prompt(request.messages, request.tools);
    const sampled = await this.sampler.sample(promptTokens, request.sampling, signal);
    if (sampled.logprobs.length !== sampled.tokens.length) {
      // A sampler answers one logprob per token; anything else is a bug in that sampler.
      throw new InvariantError(`sampler of ${this.id} returned ${sampled.logprobs.length} logprobs for ${sampled.tokens.length} tokens`);
    }
    const last = sampled.tokens.at(-1);
    const visible = last !== undefined && this.tokenizer.stopTokenIds.includes(last) ? sampled.tokens.slice(0, -1) : sampled.tokens;
    return {
      role: request.role,
      text: this.tokenizer.decode(visible),
      promptTokens: [...promptTokens],
      outputTokens: [...sampled.tokens],
      logprobs: [...sampled.logprobs],
      finishReason: sampled.finishReason,
    };
  }

  continuePrompt(previous: Generation, appended: readonly Message[], tools: readonly ToolSpec[]): number[] {
    return this.renderer.continuePrompt(previous, appended, tools);
  }
}
