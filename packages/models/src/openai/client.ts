import { abortReason, ConcurrencyLimit } from "@envace/concurrency";
import OpenAI from "openai";
import { defaultRetryOptions, HttpError, requestJson, withRetry, type HttpSettings, type RetryEvent, type RetryOptions } from "@envace/http";
import { capabilitiesOf, detectServer, type DetectedServer, type ServerCapabilities, type ServerKind } from "./capabilities.js";
import { fromOpenAIError } from "@envace/http/openai";
import { TokenDataUnavailableError } from "./errors.js";

/** Connection settings shared by every OpenAI-compatible policy and sampler. */
export interface ServerConnectionOptions {
  /** The `/v1` URL, e.g. `http://localhost:8000/v1`. */
  baseURL: string;
  /** Default `EMPTY` (what self-hosted servers accept); the application reads it from its environment. */
  apiKey?: string;
  /** Per attempt. Default 10 minutes (long generations on busy servers). */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** Requests in flight at once from this object. Default 64. */
  maxConcurrency?: number;
  /** Skip detection and assume this server. Default: detect on first use. */
  server?: ServerKind;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
  fetch?: typeof fetch;
}

/**
 * One connection to an OpenAI-compatible server: the `openai` client (its own retries off, so
 * that one policy governs every route), a retry policy, a concurrency cap, and the server's
 * capabilities, detected once.
 */
export class ServerConnection {
  readonly baseURL: string;
  readonly client: OpenAI;
  readonly retry: RetryOptions;
  readonly limiter: ConcurrencyLimit;
  readonly timeoutMs: number;
  readonly #options: ServerConnectionOptions;
  #detected: Promise<DetectedServer> | undefined;

  constructor(options: ServerConnectionOptions) {
    this.#options = options;
    // eslint-disable-next-line regexp/no-super-linear-move -- a configured URL, short and trusted
    this.baseURL = options.baseURL.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.retry = { ...defaultRetryOptions, ...options.retry };
    this.limiter = new ConcurrencyLimit(options.maxConcurrency ?? 64);
    this.client = new OpenAI({
      baseURL: this.baseURL,
      apiKey: options.apiKey ?? "EMPTY",
      maxRetries: 0,
      timeout: this.timeoutMs,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    if (options.server) this.#detected = Promise.resolve({ capabilities: capabilitiesOf(options.server), models: [] });
  }

  /** The origin without `/v1`, where SGLang's `/generate` and llama.cpp's `/completion` live. */
  get origin(): string {
    return this.baseURL.replace(/\/v1$/, "");
  }

  get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.client.apiKey ?? "EMPTY"}` };
  }

  /** What the server is and returns; detected once, retried like any request. */
  async capabilities(signal?: AbortSignal): Promise<ServerCapabilities> {
    this.#detected ??= withRetry(
      () => detectServer(this.baseURL, this.#settings(Math.min(this.timeoutMs, 30_000))),
      this.retry,
      undefined,
      this.#options.onRetry,
    );
    try {
      return (await this.#detected).capabilities;
    } catch (error) {
      // A failed detection is not remembered: the server may come up later.
      this.#detected = undefined;
      if (signal?.aborted) throw abortReason(signal);
      throw error;
    }
  }

  /**
   * Resolves once the server answers at `baseURL` (`GET /models`, retried like any request), and
   * fails with the URL and the last error when nothing does: refused, reset or timed out. Any
   * HTTP answer counts, even an error status, as servers differ in what they serve there. For a
   * command to stop before it starts work, rather than record every task as failed.
   */
  async reach(signal?: AbortSignal): Promise<void> {
    const options = this.#settings(Math.min(this.timeoutMs, 30_000), signal);
    await this.requestRaw(async () => {
      try {
        await requestJson({ url: `${this.baseURL}/models`, ...options });
      } catch (error) {
        // An answer, however unwelcome, is a server there: only silence is retried and thrown.
        if (!(error instanceof HttpError) || error.code === "connection" || error.code === "timeout") throw error;
      }
    }, signal);
  }

  /** Run `call` under the concurrency cap with retries; `openai` client errors become `HttpError`s. */
  request<T>(path: string, call: (signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const url = `${this.baseURL}${path}`;
    return this.limiter.run(
      () =>
        withRetry(
          async () => {
            try {
              return await call(signal);
            } catch (error) {
              throw fromOpenAIError(error, url, signal);
            }
          },
          this.retry,
          signal,
          this.#options.onRetry,
        ),
      signal,
    );
  }

  /**
   * POST `body` as JSON to `url` under the cap, with retries; resolves with the parsed reply. The
   * non-streaming routes go this way rather than through the `openai` client, whose per-request
   * work (headers, request options, its own timeout controller) costs more than the request here.
   */
  post(url: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.requestRaw(() => requestJson({ url, body, ...this.#settings(this.timeoutMs, signal) }), signal);
  }

  /** How every plain request of this connection is sent. */
  #settings(timeoutMs: number, signal?: AbortSignal): HttpSettings {
    return { timeoutMs, headers: this.headers, ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}), ...(signal ? { signal } : {}) };
  }

  /** Like `request`, for calls that already throw `HttpError`s (plain HTTP routes). */
  requestRaw<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.limiter.run(() => withRetry(call, this.retry, signal, this.#options.onRetry), signal);
  }
}

export function requireTokenRoute(capabilities: ServerCapabilities, baseURL: string): NonNullable<ServerCapabilities["tokenRoute"]> {
  if (!capabilities.tokenRoute) {
    throw new TokenDataUnavailableError(
      `${baseURL}: the ${capabilities.kind} server has no token-in/token-out route (vLLM /v1/completions, SGLang /generate, llama.cpp /completion); ` +
        "training needs exact token ids and logprobs. Serve the model with vLLM, SGLang or llama.cpp, or use onnx:<dir> / tiny:<dir>.",
    );
  }
  return capabilities.tokenRoute;
}
