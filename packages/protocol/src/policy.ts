import { EnvaceError } from "@envace/errors";
import { z } from "zod";
import type { Generation } from "./generation.js";
import { Message } from "./message.js";
import { parseRecord, type RecordSource } from "./record-error.js";
import { Role } from "./role.js";
import { SamplingParams } from "./sampling.js";
import { ToolSpec } from "./tool.js";

/**
 * One generation request. `messages` is the prompt in chat form; `promptTokens`, when given,
 * is the exact token rendering of it, so token-level backends continue from the very tokens
 * they sampled before instead of re-templating.
 */
export const GenerateRequest = z.object({
  role: Role,
  messages: z.array(Message),
  tools: z.array(ToolSpec).default([]),
  sampling: SamplingParams,
  promptTokens: z.array(z.number().int().nonnegative()).optional(),
});
export type GenerateRequest = z.infer<typeof GenerateRequest>;
export type GenerateRequestInput = z.input<typeof GenerateRequest>;

/** Requests whose maker vouched for them with `trustedRequest`. */
const trusted = new WeakSet<GenerateRequest>();

/**
 * Vouch for a request built from typed parts that were validated already (a server's parsed
 * request body): `readGenerateRequest` hands it to the policy as it is, without checking it a
 * second time on the hot path.
 */
export function trustedRequest(request: GenerateRequest): GenerateRequest {
  trusted.add(request);
  return request;
}

/** A request as a policy reads it: checked against `GenerateRequest`, defaults filled in; a trusted one as it is. */
export function readGenerateRequest(input: GenerateRequest | GenerateRequestInput, source: RecordSource): GenerateRequest {
  return trusted.has(input as GenerateRequest) ? (input as GenerateRequest) : parseRecord(GenerateRequest, input, source);
}

/** Anything that generates a turn in a role: an OpenAI-compatible server, ONNX, the tiny model. */
export interface Policy {
  /** A stable name for logs and run directories, e.g. `openai:qwen3-8b` or `tiny:step-40`. */
  readonly id: string;
  generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation>;
}

/** A piece of a generation as the model produces it. */
export interface GenerationDelta {
  content?: string;
  reasoning?: string;
}

/**
 * What a streaming policy hands each piece to. A promise it returns asks the policy to wait
 * before reading on (backpressure: the model server's stream is not read meanwhile); a local
 * sampler does not wait.
 */
export type DeltaListener = (delta: GenerationDelta) => void | Promise<void>;

/**
 * An optional ability: a policy that can also hand over its output while it generates. `onDelta`
 * sees the text and reasoning as they arrive; the promise settles with the whole generation (tool
 * calls included). Aborting `signal` cancels the generation on the model server too.
 */
export interface StreamingPolicy extends Policy {
  generateStream(request: GenerateRequest | GenerateRequestInput, onDelta: DeltaListener, signal?: AbortSignal): Promise<Generation>;
}

/** Whether `policy` can stream (`StreamingPolicy`). */
export function canStream(policy: Policy): policy is StreamingPolicy {
  return typeof (policy as Partial<StreamingPolicy>).generateStream === "function";
}

/**
 * An optional ability: a policy that draws `n` samples of one request at once (an
 * OpenAI-compatible server's `n`), sharing the prompt's work between them.
 */
export interface MultiSamplePolicy extends Policy {
  generateN(request: GenerateRequest | GenerateRequestInput, n: number, signal?: AbortSignal): Promise<Generation[]>;
}

/** Whether `policy` can draw several samples in one request (`MultiSamplePolicy`). */
export function canGenerateN(policy: Policy): policy is MultiSamplePolicy {
  return typeof (policy as Partial<MultiSamplePolicy>).generateN === "function";
}

/** The output of a token-level sampler. */
export interface SampledTokens {
  tokens: number[];
  /** Sampler log-probability of each sampled token. */
  logprobs: number[];
  finishReason: "stop" | "length" | "abort";
}

/** A token-in, token-out sampler: the level training needs (exact ids, per-token logprobs). */
export interface Sampler {
  sample(promptTokens: readonly number[], params: SamplingParams, signal?: AbortSignal): Promise<SampledTokens>;
}

/**
 * A prompt that does not fit the model's context. It says something about the rollout (its
 * history grew too long), not about the model server, so rollout engines end the episode with
 * `max_tokens` instead of failing.
 */
export class ContextLengthError extends EnvaceError {
  override readonly code = "context-length";
  constructor(
    readonly promptTokens: number,
    readonly contextTokens: number,
  ) {
    super(`a prompt of ${promptTokens} tokens leaves no room to generate in a context of ${contextTokens} tokens`);
  }
}
