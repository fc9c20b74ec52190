import { EnvaceError } from "@envace/errors";
import type { Tokenizer } from "@envace/protocol";
import { z } from "zod";

/** The chat-format markers the built-in tokenizer always holds as single tokens. */
export const DEFAULT_SPECIAL_TOKENS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<tool_response>",
  "</tool_response>",
  "<execution_result>",
  "</execution_result>",
] as const;

/** Special tokens that end a generation by default. */
export const DEFAULT_STOP_TOKENS = ["<|im_end|>", "<|endoftext|>"] as const;

export class TokenizerError extends EnvaceError {
  override readonly code = "tokenizer";
}

/**
 * GPT-2's pre-tokenisation pattern (what Hugging Face's `ByteLevel` pre-tokenizer splits with):
 * contractions, letters, digits and other symbols, each optionally led by one space, and runs
 * of whitespace.
 */
// GPT-2's own pre-tokenizer pattern. The rule's worry, a whitespace run that fails and is retried
// from each position, cannot happen: the last alternative, `\s+`, matches wherever the others do not.
// eslint-disable-next-line regexp/no-super-linear-move
const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * How text is split into words before merges.
 *
 * - `gpt2`: GPT-2's pattern, where a word carries its leading space (` eli`).
 * - `isolated`: letter runs, digit runs, symbol runs and whitespace runs, each on its own. A word
 *   is then the same token after a space as inside JSON (`eli` in `of eli.` and in `{"name":"eli"}`),
 *   so a small model copies it by identity instead of learning a second form of every word.
 */
export type Pretokenizer = "gpt2" | "isolated";

const ISOLATED_SOURCE = "\\p{L}+|\\p{N}+|[^\\s\\p{L}\\p{N}]+|\\s+";
export const PATTERNS: Record<Pretokenizer, RegExp> = {
  gpt2: GPT2_PATTERN,
  isolated: new RegExp(ISOLATED_SOURCE, "gu"),
};

/**
 * GPT-2's reversible map from bytes to printable characters: printable Latin-1 bytes stand for
 * themselves, the rest are shifted to U+0100 and up, so every byte string is a readable string.
 */
const BYTE_TO_CHAR: readonly string[] = (() => {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const chars = new Array<string>(256);
  for (const b of printable) chars[b] = String.fromCharCode(b);
  let next = 0;
  for (let b = 0; b < 256; b++) chars[b] ??= String.fromCharCode(256 + next++);
  return chars;
})();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));
/** The 256 byte tokens in GPT-2's order: printable bytes first. */
export const BASE_ORDER: readonly string[] = [...BYTE_TO_CHAR.filter((c) => c.charCodeAt(0) < 256), ...BYTE_TO_CHAR.filter((c) => c.charCodeAt(0) >= 256)];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function byteLevel(text: string): string {
  let out = "";
  for (const b of encoder.encode(text)) out += BYTE_TO_CHAR[b]!;
  return out;
}

/** Throw on lone UTF-16 surrogates: they have no UTF-8 encoding, so they could not round-trip. */
export function checkEncodable(text: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      throw new TokenizerError(
        `cannot encode a lone UTF-16 surrogate (U+${c.toString(16).toUpperCase()}) at index ${i}: it is not valid Unicode text and would not decode back`,
      );
    }
  }
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A byte-level BPE tokenizer (GPT-2/Qwen style) with special tokens. Every string of valid
 * Unicode encodes, and decodes back to itself; special-token strings in the text become their
 * single tokens. It writes itself as Hugging Face `tokenizer.json`/`tokenizer_config.json`, which
 * Hugging Face tokenizers load and encode identically.
 *
 * Ids: the 256 byte tokens, then the token each merge builds, in rank order, then the special tokens.
 */
export class ByteLevelBpeTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly stopTokenIds: readonly number[];
  /** Merges in rank order, as pairs of token strings. */
  readonly merges: readonly (readonly [string, string])[];
  readonly specialTokens: readonly string[];
  private readonly tokens: string[];
  private readonly ids = new Map<string, number>();
  /** Rank of each mergeable pair, keyed `left id * 2^21 + right id`, with the merged id. */
  private readonly ranks = new Map<number, { rank: number; id: number }>();
  private readonly specialIds = new Map<string, number>();
  private readonly specialPattern: RegExp | null;
  private readonly cache = new Map<string, number[]>();
  private readonly maxLength: number;
  /** The model's chat template (Jinja), written to `tokenizer_config.json` as `chat_template`. */
  readonly chatTemplate: string | undefined;
  readonly pretokenizer: Pretokenizer;

  constructor(
    merges: readonly (readonly [string, string])[],
    specialTokens: readonly string[],
    stopTokens: readonly string[],
    options: { maxLength?: number; chatTemplate?: string; pretokenizer?: Pretokenizer } = {},
  ) {
    const maxLength = options.maxLength ?? 2048;
    this.chatTemplate = options.chatTemplate;
    this.pretokenizer = options.pretokenizer ?? "gpt2";
    this.tokens = [...BASE_ORDER];
    this.tokens.forEach((t, i) => this.ids.set(t, i));
    merges.forEach(([a, b], rank) => {
      const left = this.ids.get(a);
      const right = this.ids.get(b);
      if (left === undefined || right === undefined) {
        throw new TokenizerError(`merge ${rank} (${JSON.stringify(a)} ${JSON.stringify(b)}) uses a token that no earlier merge produces`);
      }
      const merged = a + b;
      // Two merges may build the same string (ab·c and a·bc); they share its token.
      let id = this.ids.get(merged);
      if (id === undefined) {
        id = this.tokens.length;
        this.tokens.push(merged);
        this.ids.set(merged, id);
      }
      this.ranks.set(left * 2 ** 21 + right, { rank, id });
    });
    for (const special of specialTokens) {
      if (special.length === 0) throw new TokenizerError("special tokens must not be empty");
      if (this.specialIds.has(special)) throw new TokenizerError(`special token ${JSON.stringify(special)} is listed twice`);
      this.specialIds.set(special, this.tokens.length);
      this.tokens.push(special);
    }
    this.merges = merges.map(([a, b]) => [a, b] as const);
    this.specialTokens = [...specialTokens];
    this.stopTokenIds = stopTokens.map((s) => {
      const id = this.specialIds.get(s);
      if (id === undefined) throw new TokenizerError(`stop token ${JSON.stringify(s)} is not one of the special tokens`);
      return id;
    });
    this.vocabSize = this.tokens.length;
    this.maxLength = maxLength;
    // Longest first, so a special token that contains another wins.
    const sorted = [...specialTokens].sort((a, b) => b.length - a.length);
    this.specialPattern = sorted.length > 0 ? new RegExp(`(${sorted.map(escapeRegExp).join("|")})`) : null;
  }

  /** The id of a token string (byte-level form, e.g. `Ġthe`, or a special token), if any. */
  tokenToId(token: string): number | undefined {
    return this.ids.get(token) ?? this.specialIds.get(token);
  }

  idToToken(id: number): string {
    const token = this.tokens[id];
    if (token === undefined) throw new TokenizerError(`token id ${id} is outside the vocabulary (0..${this.vocabSize - 1})`);
    return token;
  }

  encode(text: string): number[] {
    checkEncodable(text);
    const out: number[] = [];
    const parts = this.specialPattern ? text.split(this.specialPattern) : [text];
    parts.forEach((part, i) => {
      // split() with a capturing group puts the separators (special tokens) at odd indices.
      if (i % 2 === 1) out.push(this.specialIds.get(part)!);
      else for (const word of part.match(PATTERNS[this.pretokenizer]) ?? []) out.push(...this.encodeWord(byteLevel(word)));
    });
    return out;
  }

  decode(tokens: readonly number[]): string {
    let text = "";
    let bytes: number[] = [];
    const flush = () => {
      if (bytes.length > 0) text += decoder.decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (const id of tokens) {
      const token = this.idToToken(id);
      if (id >= this.vocabSize - this.specialTokens.length) {
        flush();
        text += token;
      } else {
        for (const c of token) bytes.push(CHAR_TO_BYTE.get(c)!);
      }
    }
    flush();
    return text;
  }

  /** Apply the merges to one pre-token (in byte-level form): lowest rank first, leftmost first. */
  private encodeWord(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    let symbols = Array.from(word, (c) => this.ids.get(c)!);
    for (;;) {
      let best: { rank: number; id: number } | undefined;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = this.ranks.get(symbols[i]! * 2 ** 21 + symbols[i + 1]!);
        if (r && (!best || r.rank < best.rank)) best = r;
      }
      if (!best) break;
      const merged: number[] = [];
      for (let i = 0; i < symbols.length; i++) {
        const r = i + 1 < symbols.length ? this.ranks.get(symbols[i]! * 2 ** 21 + symbols[i + 1]!) : undefined;
        if (r?.rank === best.rank) {
          merged.push(best.id);
          i++;
        } else {
          merged.push(symbols[i]!);
        }
      }
      symbols = merged;
    }
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(word, symbols);
    return symbols;
  }

  /** The Hugging Face `tokenizer.json` and `tokenizer_config.json` of this tokenizer. */
  toHuggingFace(): { tokenizerJson: HfTokenizerJson; tokenizerConfig: Record<string, unknown> } {
    const added = this.specialTokens.map((content) => ({
      id: this.specialIds.get(content)!,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    }));
    // No prototype: a learned token may be `__proto__` itself, and must be written like any other.
    const vocab = Object.create(null) as Record<string, number>;
    this.tokens.slice(0, this.vocabSize - this.specialTokens.length).forEach((t, i) => (vocab[t] = i));
    const byteLevelStep = { type: "ByteLevel" as const, add_prefix_space: false as const, trim_offsets: true, use_regex: true };
    const tokenizerJson: HfTokenizerJson = {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer:
        this.pretokenizer === "gpt2"
          ? byteLevelStep
          : {
              type: "Sequence" as const,
              pretokenizers: [
                { type: "Split" as const, pattern: { Regex: ISOLATED_SOURCE }, behavior: "Isolated" as const, invert: false },
                { ...byteLevelStep, use_regex: false },
              ],
            },
      post_processor: null,
      decoder: byteLevelStep,
      model: {
        type: "BPE",
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab,
        merges: this.merges.map(([a, b]) => `${a} ${b}`),
      },
    };
    const stop = this.stopTokenIds.map((id) => this.tokens[id]!);
    const tokenizerConfig: Record<string, unknown> = {
      tokenizer_class: "PreTrainedTokenizerFast",
      add_bos_token: false,
      add_eos_token: false,
      bos_token: null,
      eos_token: stop[0] ?? null,
      pad_token: this.specialIds.has("<|endoftext|>") ? "<|endoftext|>" : null,
      unk_token: null,
      additional_special_tokens: this.specialTokens.filter((t) => t !== stop[0] && t !== "<|endoftext|>"),
      added_tokens_decoder: Object.fromEntries(added.map(({ id, ...rest }) => [String(id), rest])),
      clean_up_tokenization_spaces: false,
      model_max_length: this.maxLength,
      envace_stop_tokens: stop,
    };
    if (this.chatTemplate !== undefined) tokenizerConfig.chat_template = this.chatTemplate;
    return { tokenizerJson, tokenizerConfig };
  }

  /**
   * Read the files `toHuggingFace` writes (byte-level BPE only). `source` names the folder in
   * errors.
   */
  static fromHuggingFace(tokenizerJson: unknown, tokenizerConfig: unknown, source: string): ByteLevelBpeTokenizer {
    const parsed = HfTokenizerJson.safeParse(tokenizerJson);
    if (!parsed.success) {
      throw new TokenizerError(`${source}/tokenizer.json: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    }
    const json = parsed.data;
    const merges = json.model.merges.map((m, i): [string, string] => {
      const pair = typeof m === "string" ? m.split(" ") : m;
      if (pair.length !== 2) throw new TokenizerError(`${source}/tokenizer.json: model.merges[${i}] is not a pair of tokens`);
      return [pair[0]!, pair[1]!];
    });
    const specials = [...json.added_tokens].sort((a, b) => a.id - b.id).map((t) => t.content);
    const config = z
      .object({ envace_stop_tokens: z.array(z.string()).optional(), model_max_length: z.number().optional(), chat_template: z.string().optional() })
      .safeParse(tokenizerConfig ?? {});
    const stop = (config.success ? config.data.envace_stop_tokens : undefined) ?? DEFAULT_STOP_TOKENS.filter((t) => specials.includes(t));
    const tokenizer = new ByteLevelBpeTokenizer(merges, specials, stop, {
      ...(config.success && config.data.model_max_length !== undefined ? { maxLength: config.data.model_max_length } : {}),
      ...(config.success && config.data.chat_template !== undefined ? { chatTemplate: config.data.chat_template } : {}),
      pretokenizer: json.pre_tokenizer.type === "Sequence" ? "isolated" : "gpt2",
    });
    for (const [token, id] of Object.entries(json.model.vocab)) {
      if (tokenizer.tokenToId(token) !== id) {
        throw new TokenizerError(
          `${source}/tokenizer.json: model.vocab gives ${JSON.stringify(token)} id ${id}; this tokenizer expects the byte tokens in GPT-2 order, then one token per merge`,
        );
      }
    }
    for (const t of json.added_tokens) {
      if (tokenizer.tokenToId(t.content) !== t.id) {
        throw new TokenizerError(`${source}/tokenizer.json: added token ${JSON.stringify(t.content)} has id ${t.id}; special tokens must follow the merges`);
      }
    }
    return tokenizer;
  }
}

const ByteLevelStep = z.object({ type: z.literal("ByteLevel"), add_prefix_space: z.literal(false) }).loose();
/** The `isolated` pretokenizer: its split pattern, then bytes without GPT-2's own split. */
const IsolatedSteps = z.object({
  type: z.literal("Sequence"),
  pretokenizers: z.tuple([
    z.object({ type: z.literal("Split"), pattern: z.object({ Regex: z.literal(ISOLATED_SOURCE) }), behavior: z.literal("Isolated"), invert: z.literal(false) }),
    z.object({ type: z.literal("ByteLevel"), add_prefix_space: z.literal(false), use_regex: z.literal(false) }).loose(),
  ]),
});

export const HfTokenizerJson = z.object({
  version: z.string(),
  truncation: z.null(),
  padding: z.null(),
  added_tokens: z.array(z.object({ id: z.number().int().nonnegative(), content: z.string(), special: z.boolean() }).loose()),
  normalizer: z.null(),
  pre_tokenizer: z.union([ByteLevelStep, IsolatedSteps]),
  post_processor: z.null(),
  decoder: ByteLevelStep,
  model: z
    .object({
      type: z.literal("BPE"),
      vocab: z.record(z.string(), z.number().int().nonnegative()),
      merges: z.array(z.union([z.string(), z.array(z.string())])),
    })
    .loose(),
});
export type HfTokenizerJson = z.infer<typeof HfTokenizerJson>;
