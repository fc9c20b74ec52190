import type { Tokenizer } from "@envace/protocol";

/** Tokens kept before the read position, so a piece is decoded with some left context. */
const CONTEXT_TOKENS = 5;

/**
 * The text of a generation as its tokens arrive, in increments that concatenate to the decoded
 * output. A token need not decode alone — a UTF-8 character split over byte-level BPE pieces
 * decodes to U+FFFD until its last byte arrives — so text is released only once it decodes
 * cleanly: the window from a few tokens back is decoded with and without the new tokens, and the
 * difference is the increment (the scheme of text-generation-inference). Stop tokens are not text,
 * as `SamplerPolicy` leaves them out of `text`.
 */
export class TokenTextStream {
  readonly #tokenizer: Pick<Tokenizer, "decode" | "stopTokenIds">;
  readonly #tokens: number[] = [];
  #prefix = 0;
  #read = 0;
  #sent = "";

  constructor(tokenizer: Pick<Tokenizer, "decode" | "stopTokenIds">) {
    this.#tokenizer = tokenizer;
  }

  /** Text sent so far. */
  get text(): string {
    return this.#sent;
  }

  /** Add one sampled token; returns the text it completes ("" while a character is still partial). */
  push(token: number): string {
    if (this.#tokenizer.stopTokenIds.includes(token)) return "";
    this.#tokens.push(token);
    const before = this.#decode(this.#tokens.slice(this.#prefix, this.#read));
    const after = this.#decode(this.#tokens.slice(this.#prefix));
    if (after.length <= before.length || after.endsWith("\uFFFD") || !after.startsWith(before)) return "";
    const piece = after.slice(before.length);
    this.#read = this.#tokens.length;
    this.#prefix = Math.max(0, this.#read - CONTEXT_TOKENS);
    this.#sent += piece;
    return piece;
  }

  // Some tokenizers refuse to decode nothing.
  #decode(tokens: readonly number[]): string {
    return tokens.length === 0 ? "" : this.#tokenizer.decode(tokens);
  }

  /**
   * What remains of `full` (the generation's decoded text) after the increments sent: a trailing
   * partial character, usually nothing. `undefined` if the increments are not a prefix of it,
   * which a tokenizer whose decoding depends on later tokens could cause.
   */
  finish(full: string): string | undefined {
    if (!full.startsWith(this.#sent)) return undefined;
    const rest = full.slice(this.#sent.length);
    this.#sent = full;
    return rest;
  }
}
