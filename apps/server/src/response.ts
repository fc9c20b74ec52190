import type { Generation, Tokenizer, ToolSpec, WireToolCall } from "@envace/protocol";
import { parseActOutput } from "@envace/trajectory";

/** The assistant message of one choice, in OpenAI's shape. */
export interface ChoiceMessage {
  role: "assistant";
  content: string | null;
  reasoning_content?: string;
  tool_calls?: WireToolCall[];
}

export interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: [];
}

export type ChoiceFinish = "stop" | "length" | "tool_calls";

export interface Choice {
  index: number;
  message: ChoiceMessage;
  finish_reason: ChoiceFinish;
  logprobs: { content: LogprobEntry[] } | null;
}

export interface ChoiceOptions {
  tools: readonly ToolSpec[];
  /** Read the output as tool calls (tools given and `tool_choice` not `none`). */
  parseToolCalls: boolean;
  /** Per-token logprobs, named by this tokenizer. */
  logprobs?: Tokenizer | undefined;
  /** Makes call ids unique across responses: `call_<prefix>_<index>`. */
  callIdPrefix: string;
}

/**
 * One generation as an OpenAI choice. With tools, the output goes through the Act parser of
 * `@envace/trajectory` (Hermes `<tool_call>` blocks or native calls): tool calls come back as
 * `tool_calls`, a reply as `content`. Output the parser cannot read is returned as it is, so the
 * client's own parser sees exactly what the model wrote.
 */
export function toChoice(generation: Generation, index: number, options: ChoiceOptions): Choice {
  const logprobs = options.logprobs === undefined ? null : logprobsOf(generation, options.logprobs);
  const finish: ChoiceFinish = generation.finishReason === "length" ? "length" : "stop";
  if (!options.parseToolCalls) {
    const message: ChoiceMessage = { role: "assistant", content: generation.text };
    if (generation.reasoning !== undefined) message.reasoning_content = generation.reasoning;
    return { index, message, finish_reason: finish, logprobs };
  }
  const parsed = parseActOutput(generation, { tools: options.tools, callId: (i) => `call_${options.callIdPrefix}_${i}` });
  if (parsed.kind === "error") {
    const message: ChoiceMessage = { role: "assistant", content: generation.text };
    if (generation.reasoning !== undefined) message.reasoning_content = generation.reasoning;
    return { index, message, finish_reason: finish, logprobs };
  }
  const message: ChoiceMessage = { role: "assistant", content: parsed.content.length > 0 ? parsed.content : null };
  if (parsed.reasoning !== undefined) message.reasoning_content = parsed.reasoning;
  if (parsed.kind === "tool_calls") {
    message.tool_calls = parsed.message.tool_calls ?? [];
    return { index, message, finish_reason: "tool_calls", logprobs };
  }
  message.content ??= "";
  return { index, message, finish_reason: finish, logprobs };
}

/** Logprobs of the visible output tokens (a final stop token is not part of the text). */
function logprobsOf(generation: Generation, tokenizer: Tokenizer): { content: LogprobEntry[] } | null {
  if (generation.logprobs === null || generation.outputTokens.length === 0) return null;
  const last = generation.outputTokens.at(-1)!;
  const count = tokenizer.stopTokenIds.includes(last) ? generation.outputTokens.length - 1 : generation.outputTokens.length;
  const encoder = new TextEncoder();
  const content: LogprobEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const token = tokenizer.decode([generation.outputTokens[i]!]);
    content.push({ token, logprob: generation.logprobs[i]!, bytes: [...encoder.encode(token)], top_logprobs: [] });
  }
  return { content };
}

/** Token counts of a response, OpenAI's `usage`. Counts a policy does not report are 0. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * The usage of a response's generations: counted from their token ids where the policy returns
 * them, else the counts the model server reported (`Generation.usage`). `oneRequest`: the
 * generations are the choices of one upstream request, which all carry that request's counts
 * (counted once); otherwise each came from a request of its own.
 */
export function usageOf(generations: readonly Generation[], oneRequest = generations.length <= 1): Usage {
  const first = generations[0];
  const prompt = first === undefined ? 0 : first.promptTokens.length > 0 ? first.promptTokens.length : (first.usage?.promptTokens ?? 0);
  let completion = 0;
  let reported = false;
  for (const generation of generations) {
    if (generation.outputTokens.length > 0) completion += generation.outputTokens.length;
    else if (generation.usage !== undefined && !(oneRequest && reported)) {
      completion += generation.usage.completionTokens;
      reported = true;
    }
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** One `chat.completion.chunk` choice delta. */
export interface ChunkChoice {
  index: number;
  delta: {
    role?: "assistant";
    content?: string;
    reasoning_content?: string;
    tool_calls?: { index: number; id?: string; type?: "function"; function: { name?: string; arguments: string } }[];
  };
  finish_reason: ChoiceFinish | null;
  logprobs: { content: LogprobEntry[] } | null;
}

/** Pieces of at most `size` characters (code points kept whole). */
export function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/**
 * A finished choice as the deltas of a stream: the role, reasoning and content in pieces, each
 * tool call's id and name and then its arguments in pieces, and the finish reason. Concatenated
 * by a client, the deltas give back the choice exactly.
 */
export function choiceDeltas(choice: Choice, pieceSize = 16): ChunkChoice[] {
  const { index } = choice;
  const out: ChunkChoice[] = [{ index, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }];
  if (choice.message.reasoning_content !== undefined) {
    for (const piece of pieces(choice.message.reasoning_content, pieceSize))
      out.push({ index, delta: { reasoning_content: piece }, finish_reason: null, logprobs: null });
  }
  const content = choice.message.content ?? "";
  const contentPieces = pieces(content, pieceSize);
  for (const [i, piece] of contentPieces.entries()) {
    // Logprobs travel with the first content delta, so the stream carries them exactly once.
    out.push({ index, delta: { content: piece }, finish_reason: null, logprobs: i === 0 ? choice.logprobs : null });
  }
  for (const [callIndex, call] of (choice.message.tool_calls ?? []).entries()) out.push(...toolCallDeltas(index, callIndex, call, pieceSize));
  out.push({ index, delta: {}, finish_reason: choice.finish_reason, logprobs: contentPieces.length === 0 ? choice.logprobs : null });
  return out;
}

/** One tool call as stream deltas: its id and name, then its arguments in pieces. */
export function toolCallDeltas(index: number, callIndex: number, call: WireToolCall, pieceSize = 16): ChunkChoice[] {
  const out: ChunkChoice[] = [
    {
      index,
      delta: { tool_calls: [{ index: callIndex, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] },
      finish_reason: null,
      logprobs: null,
    },
  ];
  for (const piece of pieces(call.function.arguments, pieceSize)) {
    out.push({ index, delta: { tool_calls: [{ index: callIndex, function: { arguments: piece } }] }, finish_reason: null, logprobs: null });
  }
  return out;
}
