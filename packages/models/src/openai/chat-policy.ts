import { parseReply } from "@envace/http";
import {
  readGenerateRequest,
  type DeltaListener,
  type GenerateRequest,
  type GenerateRequestInput,
  type Generation,
  type MultiSamplePolicy,
  type StreamingPolicy,
} from "@envace/protocol";
import { trainingGaps, type ServerCapabilities } from "./capabilities.js";
import { streamChat } from "./chat-stream.js";
import { ServerConnection, type ServerConnectionOptions } from "./client.js";
import { TokenDataUnavailableError } from "./errors.js";
import { ChatResponse, chatChoiceToGeneration, chatRequestBody, missingTokenData, type TokenDataMode } from "./wire.js";

export interface OpenAIChatPolicyOptions extends ServerConnectionOptions {
  /** The served model id, e.g. `Qwen/Qwen3-8B`. */
  model: string;
  /**
   * `auto` (default): ask for logprobs and token ids where the server can give them.
   * `require`: also fail with `TokenDataUnavailableError` when a generation lacks them (training).
   * `off`: plain generations (evaluation, judging).
   */
  tokenData?: TokenDataMode;
  /** Fields merged into every request body, e.g. `{ chat_template_kwargs: { enable_thinking: false } }`. */
  extraBody?: Record<string, unknown>;
  /** Share a connection (retry policy, concurrency cap, detected capabilities) with other objects. */
  connection?: ServerConnection;
}

/**
 * A `Policy` served by any OpenAI-compatible chat completions endpoint: vLLM, SGLang,
 * llama.cpp, the OpenAI API. Tools go out as OpenAI function tools; native tool calls come back
 * in `Generation.toolCalls`, separated reasoning in `reasoning`. Token ids and logprobs are
 * filled in where the server returns them (vLLM); the chat route re-templates every turn, so for
 * training prefer the token route (`OpenAICompletionsSampler`).
 */
export class OpenAIChatPolicy implements StreamingPolicy, MultiSamplePolicy {
  readonly id: string;
  readonly connection: ServerConnection;
  readonly #options: OpenAIChatPolicyOptions;

  constructor(options: OpenAIChatPolicyOptions) {
    this.#options = options;
    this.connection = options.connection ?? new ServerConnection(options);
    this.id = `openai:${options.model}`;
  }

  capabilities(signal?: AbortSignal): Promise<ServerCapabilities> {
    return this.connection.capabilities(signal);
  }

  async generate(request: GenerateRequest | GenerateRequestInput, signal?: AbortSignal): Promise<Generation> {
    const [generation] = await this.generateN(request, 1, signal);
    return generation!;
  }

  /** `n` samples of one prompt in a single request (`n` on the wire). */
  async generateN(input: GenerateRequest | GenerateRequestInput, n: number, signal?: AbortSignal): Promise<Generation[]> {
    const request = readGenerateRequest(input, { file: `${this.id} generate request` });
    const tokenData = this.#options.tokenData ?? "auto";
    const capabilities = await this.connection.capabilities(signal);
    if (tokenData === "require") {
      const gaps = trainingGaps(capabilities, "chat");
      if (gaps.length > 0 && capabilities.kind !== "unknown") throw this.#unavailable(capabilities, gaps);
    }
    const body = { ...chatRequestBody(this.#options.model, request, n, capabilities, tokenData), ...this.#options.extraBody };
    const url = `${this.connection.baseURL}/chat/completions`;
    const raw = await this.connection.post(url, body, signal);
    const completion = parseReply(ChatResponse, raw, url);
    const generations = completion.choices.map((_, i) => chatChoiceToGeneration(completion, i, request.role));
    if (tokenData === "require") {
      for (const generation of generations) {
        const missing = missingTokenData(generation);
        if (missing.length > 0) throw this.#unavailable(capabilities, [`the response carried no ${missing.join(", ")}`]);
      }
    }
    return generations;
  }

  /** One generation handed over as it is produced (`stream: true`); see `StreamingPolicy`. */
  generateStream(request: GenerateRequest | GenerateRequestInput, onDelta: DeltaListener, signal?: AbortSignal): Promise<Generation> {
    return streamChat(this.connection, this.#options.model, request, { extraBody: this.#options.extraBody, onDelta, signal });
  }

  #unavailable(capabilities: ServerCapabilities, gaps: string[]): TokenDataUnavailableError {
    const route = capabilities.tokenRoute ? ` Its token route (${capabilities.tokenRoute}) has them: use mode=tokens with a tokenizer.` : "";
    return new TokenDataUnavailableError(
      `${this.connection.baseURL} (${capabilities.kind}): training needs prompt and output token ids with per-token logprobs, but ${gaps.join("; ")}.${route}`,
    );
  }
}
