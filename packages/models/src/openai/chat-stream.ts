import { readGenerateRequest, type DeltaListener, type GenerateRequest, type GenerateRequestInput, type Generation, type WireToolCall } from "@envace/protocol";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { fromOpenAIError } from "@envace/http/openai";
import { abortReason } from "@envace/concurrency";
import { HttpError } from "@envace/http";
import type { ServerConnection } from "./client.js";
import { chatRequestBody, toFinishReason, usageCounts, WireUsage } from "./wire.js";

type StreamDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };

/**
 * One chat completion with `stream: true`. Opening the stream is retried like any request; once
 * deltas have been handed on, a failure is not retried (the caller has already shown them).
 * Streamed generations carry no token data; the server's `usage` (asked for with
 * `stream_options.include_usage`) gives their counts. A stream that ends without a
 * `finish_reason` was cut short, whether or not the connection failed: it throws an `HttpError`
 * (`connection`) rather than passing a truncated answer on as finished.
 */
export async function streamChat(
  connection: ServerConnection,
  model: string,
  input: GenerateRequest | GenerateRequestInput,
  options: { extraBody?: Record<string, unknown> | undefined; onDelta: DeltaListener; signal?: AbortSignal | undefined },
): Promise<Generation> {
  const request = readGenerateRequest(input, { file: `openai:${model} stream request` });
  const { signal } = options;
  const capabilities = await connection.capabilities(signal);
  const body = { ...chatRequestBody(model, request, 1, capabilities, "off"), stream_options: { include_usage: true }, ...options.extraBody, stream: true };
  const url = `${connection.baseURL}/chat/completions`;
  const stream = await connection.request(
    "/chat/completions",
    (s) => connection.client.chat.completions.create(body as unknown as ChatCompletionCreateParamsStreaming, { signal: s ?? null }),
    signal,
  );
  let text = "";
  let reasoning: string | undefined;
  let finish: string | null | undefined;
  let usage: WireUsage;
  const calls: { id?: string; name: string; arguments: string }[] = [];
  try {
    for await (const chunk of stream) {
      usage = WireUsage.parse(chunk.usage) ?? usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      const delta = choice.delta as StreamDelta;
      const thought = delta.reasoning_content ?? delta.reasoning ?? undefined;
      if (thought) {
        reasoning = (reasoning ?? "") + thought;
        await options.onDelta({ reasoning: thought });
      }
      if (delta.content) {
        text += delta.content;
        await options.onDelta({ content: delta.content });
      }
      for (const call of delta.tool_calls ?? []) {
        const known = (calls[call.index] ??= { name: "", arguments: "" });
        if (call.id) known.id = call.id;
        known.name += call.function?.name ?? "";
        known.arguments += call.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
  } catch (error) {
    throw fromOpenAIError(error, url, signal);
  }
  // The client ends an aborted stream quietly: the caller's abort, not a cut.
  if (signal?.aborted) throw abortReason(signal);
  if (finish == null) throw new HttpError("connection", url, "the stream ended before the model finished (no finish_reason)");
  const counts = usageCounts(usage);
  const toolCalls: WireToolCall[] = calls.map((call, i) => ({
    id: call.id ?? `call_0_${i}`,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    role: request.role,
    text,
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    promptTokens: [],
    outputTokens: [],
    logprobs: null,
    finishReason: toFinishReason(finish),
    ...(counts === undefined ? {} : { usage: counts }),
  };
}
