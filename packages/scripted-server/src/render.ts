import { ScriptError } from "./reply.js";
import type { GenerateReply, ScriptedChoice, ScriptedToken } from "./reply.js";

/**
 * What the server reports beyond plain OpenAI: `openai` answers like api.openai.com (logprobs
 * on request, never token ids); `vllm` also honours `return_token_ids` and
 * `return_tokens_as_token_ids`.
 */
export type Dialect = "openai" | "vllm";

/** The request fields rendering depends on, read leniently from the JSON body. */
export interface RenderRequest {
  model: string;
  n: number;
  /** Chat: `logprobs: true`; completions: `logprobs: <int>`. */
  logprobs: boolean;
  topLogprobs: number;
  returnTokenIds: boolean;
  tokensAsIds: boolean;
  /** A token-array prompt of `/v1/completions`, echoed as `prompt_token_ids`. */
  promptTokenIds?: number[];
  includeUsage: boolean;
}

export function readRenderRequest(body: Record<string, unknown>, endpoint: "chat" | "completions"): RenderRequest {
  const logprobsField = body.logprobs;
  const logprobs = endpoint === "chat" ? logprobsField === true : typeof logprobsField === "number";
  const topLogprobs =
    endpoint === "chat" ? (typeof body.top_logprobs === "number" ? body.top_logprobs : 0) : typeof logprobsField === "number" ? logprobsField : 0;
  const prompt = body.prompt;
  const promptTokenIds = Array.isArray(prompt) && prompt.every((t) => typeof t === "number") ? prompt : undefined;
  const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
  return {
    model: typeof body.model === "string" ? body.model : "scripted-model",
    n: typeof body.n === "number" && body.n > 0 ? body.n : 1,
    logprobs,
    topLogprobs,
    returnTokenIds: body.return_token_ids === true,
    tokensAsIds: body.return_tokens_as_token_ids === true,
    ...(promptTokenIds ? { promptTokenIds } : {}),
    includeUsage: streamOptions?.include_usage === true,
  };
}

/** The reply's choices, repeated in turn to fill `n`. */
export function fillChoices(reply: GenerateReply, n: number): ScriptedChoice[] {
  if (reply.choices.length === 0) throw new ScriptError("a generate reply needs at least one choice");
  if (reply.choices.length >= n) return reply.choices;
  return Array.from({ length: n }, (_, i) => reply.choices[i % reply.choices.length]!);
}

export function choiceText(choice: ScriptedChoice): string {
  return choice.text ?? (choice.tokens ?? []).map((t) => t.text).join("");
}

export function finishReason(choice: ScriptedChoice): string {
  return choice.finishReason ?? (choice.toolCalls?.length ? "tool_calls" : "stop");
}

function tokenLabel(token: { id: number; text: string }, asIds: boolean): string {
  return asIds ? `token_id:${token.id}` : token.text;
}

export function wireToolCalls(choice: ScriptedChoice, choiceIndex: number): Record<string, unknown>[] | undefined {
  if (!choice.toolCalls?.length) return undefined;
  return choice.toolCalls.map((call, i) => ({
    id: call.id ?? `call_${choiceIndex}_${i}`,
    type: "function",
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
}

export function chatLogprobs(tokens: readonly ScriptedToken[], request: RenderRequest, dialect: Dialect): unknown {
  const asIds = dialect === "vllm" && request.tokensAsIds;
  return {
    content: tokens.map((token) => ({
      token: tokenLabel(token, asIds),
      logprob: token.logprob,
      bytes: [...Buffer.from(token.text, "utf8")],
      top_logprobs: (token.top ?? []).slice(0, request.topLogprobs).map((alt) => ({
        token: tokenLabel(alt, asIds),
        logprob: alt.logprob,
        bytes: [...Buffer.from(alt.text, "utf8")],
      })),
    })),
  };
}

export function completionLogprobs(tokens: readonly ScriptedToken[], request: RenderRequest, dialect: Dialect, startOffset = 0): unknown {
  const asIds = dialect === "vllm" && request.tokensAsIds;
  const textOffset: number[] = [];
  let offset = startOffset;
  for (const token of tokens) {
    textOffset.push(offset);
    offset += token.text.length;
  }
  return {
    tokens: tokens.map((t) => tokenLabel(t, asIds)),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => Object.fromEntries((t.top ?? []).slice(0, request.topLogprobs).map((alt) => [tokenLabel(alt, asIds), alt.logprob]))),
    text_offset: textOffset,
  };
}

function promptIds(reply: GenerateReply, request: RenderRequest): number[] | undefined {
  return reply.promptTokenIds ?? request.promptTokenIds;
}

function usage(reply: GenerateReply, choices: readonly ScriptedChoice[], request: RenderRequest): Record<string, number> {
  const prompt = promptIds(reply, request)?.length ?? 0;
  const completion = choices.reduce((sum, c) => sum + (c.tokens?.length ?? 0), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** What every rendering of a reply starts from: its choices, whether token ids go out (vLLM's extension), the prompt's ids. */
function prepare(
  reply: GenerateReply,
  request: RenderRequest,
  dialect: Dialect,
): { choices: ScriptedChoice[]; withIds: boolean; prompt: number[] | undefined } {
  return { choices: fillChoices(reply, request.n), withIds: dialect === "vllm" && request.returnTokenIds, prompt: promptIds(reply, request) };
}

/** The fields every body and chunk begins with. */
const header = (id: string, object: string, request: RenderRequest) => ({ id, object, created: Math.floor(Date.now() / 1000), model: request.model });

export function renderChat(reply: GenerateReply, request: RenderRequest, dialect: Dialect, id: string): Record<string, unknown> {
  const { choices, withIds, prompt } = prepare(reply, request, dialect);
  return {
    ...header(id, "chat.completion", request),
    choices: choices.map((choice, index) => {
      const toolCalls = wireToolCalls(choice, index);
      const text = choiceText(choice);
      return {
        index,
        message: {
          role: "assistant",
          content: text === "" && toolCalls ? null : text,
          ...(choice.reasoning !== undefined ? { reasoning_content: choice.reasoning, reasoning: choice.reasoning } : {}),
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: request.logprobs && choice.tokens ? chatLogprobs(choice.tokens, request, dialect) : null,
        finish_reason: finishReason(choice),
        ...(withIds ? { token_ids: choice.tokens?.map((t) => t.id) ?? null } : {}),
      };
    }),
    usage: usage(reply, choices, request),
    ...(withIds ? { prompt_token_ids: prompt ?? null } : {}),
    ...reply.extra,
  };
}

export function renderCompletion(reply: GenerateReply, request: RenderRequest, dialect: Dialect, id: string): Record<string, unknown> {
  const { choices, withIds, prompt } = prepare(reply, request, dialect);
  return {
    ...header(id, "text_completion", request),
    choices: choices.map((choice, index) => ({
      index,
      text: choiceText(choice),
      logprobs: request.logprobs && choice.tokens ? completionLogprobs(choice.tokens, request, dialect) : null,
      finish_reason: finishReason(choice),
      ...(withIds ? { token_ids: choice.tokens?.map((t) => t.id) ?? null, prompt_token_ids: prompt ?? null } : {}),
    })),
    usage: usage(reply, choices, request),
    ...reply.extra,
  };
}

/**
 * The server-sent events of a streamed generation: per choice a role chunk (chat), one chunk
 * per token (or one for the whole text), tool-call chunks, a finish chunk; then usage if asked.
 */
export function renderStream(endpoint: "chat" | "completions", reply: GenerateReply, request: RenderRequest, dialect: Dialect, id: string): unknown[] {
  const { choices, withIds, prompt } = prepare(reply, request, dialect);
  const base = header(id, endpoint === "chat" ? "chat.completion.chunk" : "text_completion", request);
  const events: unknown[] = [];
  const push = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}): void => {
    events.push({ ...base, choices: [choice], ...extra, ...reply.extra });
  };
  choices.forEach((choice, index) => {
    const pieces: { text: string; tokens: ScriptedToken[] }[] = choice.tokens
      ? choice.tokens.map((t) => ({ text: t.text, tokens: [t] }))
      : [{ text: choiceText(choice), tokens: [] }];
    const first = index === 0 && withIds && endpoint === "chat" ? { prompt_token_ids: prompt ?? null } : {};
    if (endpoint === "chat") {
      push({ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }, first);
      if (choice.reasoning !== undefined) {
        push({ index, delta: { reasoning_content: choice.reasoning, reasoning: choice.reasoning }, logprobs: null, finish_reason: null });
      }
    }
    let offset = 0;
    pieces.forEach((piece, p) => {
      if (piece.text === "" && piece.tokens.length === 0) return;
      const logprobs =
        request.logprobs && piece.tokens.length > 0
          ? endpoint === "chat"
            ? chatLogprobs(piece.tokens, request, dialect)
            : completionLogprobs(piece.tokens, request, dialect, offset)
          : null;
      const ids = withIds ? { token_ids: piece.tokens.map((t) => t.id) } : {};
      const promptEcho = withIds && endpoint === "completions" && p === 0 ? { prompt_token_ids: prompt ?? null } : {};
      if (endpoint === "chat") push({ index, delta: { content: piece.text }, logprobs, finish_reason: null, ...ids });
      else push({ index, text: piece.text, logprobs, finish_reason: null, ...ids, ...promptEcho });
      offset += piece.text.length;
    });
    const toolCalls = wireToolCalls(choice, index);
    toolCalls?.forEach((call, i) => {
      push({ index, delta: { tool_calls: [{ index: i, ...call }] }, logprobs: null, finish_reason: null });
    });
    if (endpoint === "chat") push({ index, delta: {}, logprobs: null, finish_reason: finishReason(choice) });
    else push({ index, text: "", logprobs: null, finish_reason: finishReason(choice) });
  });
  if (request.includeUsage) events.push({ ...base, choices: [], usage: usage(reply, choices, request) });
  return events;
}
