import { EnvaceError } from "@envace/errors";
import type { FinishReason, Generation, GenerateRequest, Message, Role, SamplingParams, WireToolCall } from "@envace/protocol";
import { z } from "zod";
import type { ServerCapabilities } from "./capabilities.js";

/** A request for something the model server or tokenizer does not offer, such as top_k on a server without it. */
export class ModelCapabilityError extends EnvaceError {
  override readonly code = "model-capability";
}

/**
 * Sampling fields for an OpenAI-compatible body. Servers with extended sampling get every knob
 * set explicitly — `top_k`, `min_p`, `repetition_penalty` — because vLLM and SGLang otherwise
 * apply the model's `generation_config.json` defaults and llama.cpp its own (top_k 40, min_p
 * 0.05): the sampled distribution would silently differ from the one training assumes.
 */
export function samplingFields(params: SamplingParams, capabilities: ServerCapabilities): Record<string, unknown> {
  const fields: Record<string, unknown> = { temperature: params.temperature, top_p: params.topP };
  if (capabilities.extendedSampling) {
    // vLLM and SGLang read -1 as "no top-k" in every version; llama.cpp reads 0.
    fields.top_k = params.topK > 0 ? params.topK : capabilities.kind === "llama.cpp" ? 0 : -1;
    fields.min_p = 0;
    if (capabilities.kind === "llama.cpp") fields.repeat_penalty = 1;
    else fields.repetition_penalty = 1;
  } else if (params.topK > 0) {
    throw new ModelCapabilityError(`top_k ${params.topK} was requested, but the ${capabilities.kind} server has no top_k parameter`);
  }
  if (params.stop.length > 0) fields.stop = params.stop;
  if (params.seed !== undefined) fields.seed = params.seed;
  return fields;
}

/** Protocol messages on the wire. The OpenAI API rejects `reasoning_content`; self-hosted servers' chat templates use it. */
export function wireMessages(messages: readonly Message[], capabilities: ServerCapabilities): Record<string, unknown>[] {
  return messages.map((message) => {
    if (message.role !== "assistant") return { ...message };
    const { reasoning_content, ...rest } = message;
    const keepReasoning = reasoning_content !== undefined && capabilities.kind !== "openai";
    return { ...rest, ...(keepReasoning ? { reasoning_content } : {}) };
  });
}

export type TokenDataMode = "auto" | "require" | "off";

/** The body of one chat completion request. */
export function chatRequestBody(
  model: string,
  request: GenerateRequest,
  n: number,
  capabilities: ServerCapabilities,
  tokenData: TokenDataMode,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: wireMessages(request.messages, capabilities),
    ...samplingFields(request.sampling, capabilities),
  };
  // The OpenAI API deprecated max_tokens; self-hosted servers all accept it, not all the newer name.
  body[capabilities.kind === "openai" ? "max_completion_tokens" : "max_tokens"] = request.sampling.maxTokens;
  if (request.tools.length > 0) body.tools = request.tools;
  if (n > 1) body.n = n;
  if (tokenData !== "off" && capabilities.chatLogprobs) {
    body.logprobs = true;
    body.top_logprobs = 0;
    if (capabilities.kind === "vllm") {
      body.return_token_ids = true;
      body.return_tokens_as_token_ids = true;
    }
  }
  return body;
}

const WireCall = z.looseObject({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
});

/** A reply's `usage`; one a server spells differently is ignored rather than failing the reply. */
export const WireUsage = z
  .looseObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
  .nullish()
  .catch(undefined);
export type WireUsage = z.infer<typeof WireUsage>;

/** The server's `usage` as a generation's counts. */
export function usageCounts(usage: WireUsage): Generation["usage"] {
  return usage == null ? undefined : { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
}

export const ChatResponse = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        index: z.number().int().optional(),
        message: z.looseObject({
          content: z.string().nullish(),
          reasoning_content: z.string().nullish(),
          reasoning: z.string().nullish(),
          tool_calls: z.array(WireCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
        logprobs: z.looseObject({ content: z.array(z.looseObject({ token: z.string(), logprob: z.number() })).nullish() }).nullish(),
        token_ids: z.array(z.number().int().nonnegative()).nullish(),
      }),
    )
    .min(1),
  prompt_token_ids: z.array(z.number().int().nonnegative()).nullish(),
  usage: WireUsage,
});
export type ChatResponse = z.infer<typeof ChatResponse>;

export function toFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "abort":
      return "abort";
    case "content_filter":
    case "error":
      return "error";
    default:
      return "stop";
  }
}

/** `token_id:123` → 123 (vLLM `return_tokens_as_token_ids`); anything else → undefined. */
export function tokenIdOf(token: string): number | undefined {
  const match = /^token_id:(\d+)$/.exec(token);
  return match ? Number(match[1]) : undefined;
}

/** Ids spelled by `token_id:<id>` labels, or undefined if any label is plain text. */
export function idsFromLabels(labels: readonly string[]): number[] | undefined {
  const ids: number[] = [];
  for (const label of labels) {
    const id = tokenIdOf(label);
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return ids;
}

/** One choice of a chat response as a protocol `Generation`. */
export function chatChoiceToGeneration(response: ChatResponse, choiceIndex: number, role: Role): Generation {
  const choice = response.choices[choiceIndex]!;
  const logprobEntries = choice.logprobs?.content ?? undefined;
  const ids = choice.token_ids ?? (logprobEntries ? idsFromLabels(logprobEntries.map((e) => e.token)) : undefined);
  const outputTokens = ids ?? [];
  // Logprobs are training data only when they line up with known token ids.
  const logprobs = ids && logprobEntries?.length === ids.length ? logprobEntries.map((e) => e.logprob) : null;
  const toolCalls: WireToolCall[] | undefined = choice.message.tool_calls?.map((call, i) => ({
    id: call.id ?? `call_${choiceIndex}_${i}`,
    type: "function",
    function: { name: call.function.name, arguments: call.function.arguments ?? "" },
  }));
  const reasoning = choice.message.reasoning_content ?? choice.message.reasoning ?? undefined;
  // Without token ids, the server's own counts are all a caller has to report usage with.
  const usage = ids === undefined ? usageCounts(response.usage) : undefined;
  return {
    role,
    text: choice.message.content ?? "",
    ...(reasoning !== undefined ? { reasoning } : {}),
    ...(toolCalls && toolCalls.length > 0 ? { toolCalls } : {}),
    promptTokens: response.prompt_token_ids ?? [],
    outputTokens,
    logprobs,
    finishReason: toFinishReason(choice.finish_reason),
    ...(usage === undefined ? {} : { usage }),
  };
}

/** What a generation lacks for training, as short phrases; empty when it has everything. */
export function missingTokenData(generation: Generation): string[] {
  const missing: string[] = [];
  if (generation.promptTokens.length === 0) missing.push("prompt token ids");
  if (generation.logprobs === null) missing.push(generation.outputTokens.length === 0 ? "output token ids and logprobs" : "per-token logprobs");
  return missing;
}
