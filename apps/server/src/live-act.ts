import { parseActOutput } from "@envace/trajectory";
import { pieces, toolCallDeltas, type Choice, type ChoiceOptions, type ChunkChoice } from "./response.js";

/** Tags after which visible text is no longer streamed as it comes (the parser may reread it). */
const MARKUP = ["<tool_call>", "</tool_call>", "<think>", "</think>"];
const CLOSE = "</tool_call>";

/**
 * The live stream of a choice read as tool calls, built from the model's text as it is generated.
 *
 * - Text before any markup goes out as content at once, less what the Act parser could still
 *   trim or reread: trailing whitespace, and a tail that may begin a tag. Output that starts with
 *   whitespace waits for the end (the parser's content would not start with it).
 * - Each `<tool_call>` block is sent as a tool call once it closes and the output up to it reads
 *   as tool calls.
 * - `finish` sends the rest of the finished choice (reasoning, later content, calls still
 *   unsent, the finish reason).
 *
 * The deltas reassemble to the non-streaming choice whenever the finished output extends what was
 * already sent. When it does not — a readable call followed by an unreadable one makes the whole
 * output unreadable, and a late `</think>` turns earlier text into reasoning — the rest of the raw
 * text follows as content, so the client still sees everything the model wrote.
 */
export class LiveActStream {
  readonly #options: ChoiceOptions;
  #text = "";
  #content = "";
  #calls: ChoiceMessageCall[] = [];
  /** Where the next `</tool_call>` is looked for. */
  #scanned = 0;
  #markup = false;
  #callsReadable = true;

  constructor(options: ChoiceOptions) {
    this.#options = options;
  }

  /** The deltas a new piece of the model's text releases. */
  push(piece: string): ChunkChoice[] {
    this.#text += piece;
    return [...this.#releaseContent(), ...this.#releaseCalls()];
  }

  /** The remaining deltas of the finished choice, ending with its finish reason. */
  finish(choice: Choice, text: string): ChunkChoice[] {
    const { index } = choice;
    const out: ChunkChoice[] = [];
    const content = choice.message.content ?? "";
    const calls = choice.message.tool_calls ?? [];
    const extendsSent = content.startsWith(this.#content) && this.#calls.every((sent, i) => sameCall(sent, calls[i]));
    if (!extendsSent) {
      for (const piece of pieces(text.slice(this.#content.length), 16)) out.push(contentDelta(index, piece));
      out.push({ index, delta: {}, finish_reason: choice.finish_reason === "tool_calls" ? "stop" : choice.finish_reason, logprobs: null });
      return out;
    }
    if (choice.message.reasoning_content !== undefined) {
      for (const piece of pieces(choice.message.reasoning_content, 16))
        out.push({ index, delta: { reasoning_content: piece }, finish_reason: null, logprobs: null });
    }
    for (const piece of pieces(content.slice(this.#content.length), 16)) out.push(contentDelta(index, piece));
    for (let i = this.#calls.length; i < calls.length; i += 1) out.push(...toolCallDeltas(index, i, calls[i]!));
    out.push({ index, delta: {}, finish_reason: choice.finish_reason, logprobs: null });
    return out;
  }

  #releaseContent(): ChunkChoice[] {
    if (this.#markup || /^\s/.test(this.#text)) return [];
    const at = Math.min(...MARKUP.map((tag) => this.#text.indexOf(tag)).filter((i) => i >= 0));
    this.#markup = Number.isFinite(at);
    const before = this.#markup ? this.#text.slice(0, at) : this.#text.slice(0, this.#text.length - partialTagLength(this.#text));
    const ready = before.trimEnd();
    if (ready.length <= this.#content.length) return [];
    const piece = ready.slice(this.#content.length);
    this.#content = ready;
    return [contentDelta(0, piece)];
  }

  #releaseCalls(): ChunkChoice[] {
    const out: ChunkChoice[] = [];
    for (let close = this.#text.indexOf(CLOSE, this.#scanned); close >= 0 && this.#callsReadable; close = this.#text.indexOf(CLOSE, this.#scanned)) {
      this.#scanned = close + CLOSE.length;
      const parsed = parseActOutput(
        { text: this.#text.slice(0, this.#scanned) },
        { tools: this.#options.tools, callId: (i) => `call_${this.#options.callIdPrefix}_${i}` },
      );
      if (parsed.kind !== "tool_calls") {
        this.#callsReadable = false;
        break;
      }
      for (const call of (parsed.message.tool_calls ?? []).slice(this.#calls.length)) {
        out.push(...toolCallDeltas(0, this.#calls.length, call));
        this.#calls.push(call);
      }
    }
    return out;
  }
}

type ChoiceMessageCall = NonNullable<Choice["message"]["tool_calls"]>[number];

function sameCall(a: ChoiceMessageCall, b: ChoiceMessageCall | undefined): boolean {
  return a.id === b?.id && a.function.name === b.function.name && a.function.arguments === b.function.arguments;
}

function contentDelta(index: number, content: string): ChunkChoice {
  return { index, delta: { content }, finish_reason: null, logprobs: null };
}

/** Length of the longest tail of `text` that is the start of a markup tag. */
function partialTagLength(text: string): number {
  for (let length = Math.min(text.length, Math.max(...MARKUP.map((t) => t.length)) - 1); length > 0; length -= 1) {
    const tail = text.slice(-length);
    if (MARKUP.some((tag) => tag.startsWith(tail))) return length;
  }
  return 0;
}
