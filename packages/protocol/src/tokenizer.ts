/**
 * Text ↔ token ids for one model. Implemented by Hugging Face `tokenizer.json` loaders and by
 * the built-in tiny model's tokenizer.
 */
export interface Tokenizer {
  readonly vocabSize: number;
  /** Token ids that end a generation (e.g. `<|im_end|>`, `<|endoftext|>`). */
  readonly stopTokenIds: readonly number[];
  /** Encode text, special-token strings included, to ids. Throws on input it cannot represent. */
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}
