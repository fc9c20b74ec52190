import {
  ByteLevelBpeTokenizer,
  BASE_ORDER,
  byteLevel,
  checkEncodable,
  DEFAULT_SPECIAL_TOKENS,
  DEFAULT_STOP_TOKENS,
  escapeRegExp,
  PATTERNS,
  TokenizerError,
  type Pretokenizer,
} from "./tokenizer.js";

export interface TrainTokenizerOptions {
  /** Total vocabulary: 256 byte tokens, the merges learned, and the special tokens. */
  vocabSize: number;
  /** Default: `DEFAULT_SPECIAL_TOKENS`. */
  specialTokens?: readonly string[];
  /** Special tokens that end a generation. Default: `<|im_end|>` and `<|endoftext|>`. */
  stopTokens?: readonly string[];
  /** Pairs seen fewer times than this are never merged (default 2). */
  minFrequency?: number;
  /** `model_max_length` written to `tokenizer_config.json`. */
  maxLength?: number;
  /** The chat template written to `tokenizer_config.json`, so a checkpoint folder loads as a chat model. */
  chatTemplate?: string;
  /** How text is split into words before merges (default `gpt2`). */
  pretokenizer?: Pretokenizer;
}

/**
 * Learn byte-level BPE merges from a corpus: split each text on the special tokens and with the
 * GPT-2 pattern, then repeatedly merge the most frequent adjacent pair (ties: the pair of lowest
 * ids) until the vocabulary is full or no pair occurs `minFrequency` times.
 */
export function trainTokenizer(corpus: Iterable<string>, options: TrainTokenizerOptions): ByteLevelBpeTokenizer {
  const specials = options.specialTokens ?? DEFAULT_SPECIAL_TOKENS;
  const stops = options.stopTokens ?? DEFAULT_STOP_TOKENS.filter((t) => specials.includes(t));
  const minFrequency = options.minFrequency ?? 2;
  const targetMerges = options.vocabSize - 256 - specials.length;
  if (!Number.isInteger(options.vocabSize) || targetMerges < 0) {
    throw new TokenizerError(
      `vocabSize must be at least 256 byte tokens plus ${specials.length} special tokens (${256 + specials.length}), got ${options.vocabSize}`,
    );
  }
  const splitter =
    specials.length > 0
      ? new RegExp(
          [...specials]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
        )
      : null;
  const counts = new Map<string, number>();
  let index = 0;
  for (const text of corpus) {
    try {
      checkEncodable(text);
    } catch (error) {
      throw new TokenizerError(`corpus text ${index}: ${(error as Error).message}`, { cause: error });
    }
    for (const part of splitter ? text.split(splitter) : [text]) {
      for (const word of part.match(PATTERNS[options.pretokenizer ?? "gpt2"]) ?? []) {
        const w = byteLevel(word);
        counts.set(w, (counts.get(w) ?? 0) + 1);
      }
    }
    index++;
  }

  const symbolId = new Map(BASE_ORDER.map((t, i) => [t, i]));
  const symbols = [...BASE_ORDER];
  const words: number[][] = [];
  const freqs: number[] = [];
  for (const [w, n] of counts) {
    words.push(Array.from(w, (c) => symbolId.get(c)!));
    freqs.push(n);
  }
  const KEY = 2 ** 21;
  const pairCounts = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const heap = new MaxHeap();
  const addPairs = (w: number, sign: 1 | -1, touched: Set<number>) => {
    const seq = words[w]!;
    for (let i = 0; i + 1 < seq.length; i++) {
      const key = seq[i]! * KEY + seq[i + 1]!;
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + sign * freqs[w]!);
      touched.add(key);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) {
          set = new Set();
          pairWords.set(key, set);
        }
        set.add(w);
      }
    }
  };
  const initial = new Set<number>();
  words.forEach((_, w) => {
    addPairs(w, 1, initial);
  });
  for (const key of initial) heap.push(pairCounts.get(key)!, key);

  const merges: [string, string][] = [];
  while (symbols.length < 256 + targetMerges) {
    const top = heap.pop();
    if (!top) break;
    const [count, key] = top;
    if (pairCounts.get(key) !== count) continue;
    if (count < minFrequency) break;
    const left = Math.floor(key / KEY);
    const right = key % KEY;
    const text = symbols[left]! + symbols[right]!;
    let id = symbolId.get(text);
    if (id === undefined) {
      id = symbols.length;
      symbols.push(text);
      symbolId.set(text, id);
    }
    merges.push([symbols[left]!, symbols[right]!]);
    const touched = new Set<number>();
    for (const w of pairWords.get(key) ?? []) {
      const seq = words[w]!;
      let found = false;
      for (let i = 0; i + 1 < seq.length; i++) if (seq[i] === left && seq[i + 1] === right) found = true;
      if (!found) continue;
      addPairs(w, -1, touched);
      const merged: number[] = [];
      for (let i = 0; i < seq.length; i++) {
        if (i + 1 < seq.length && seq[i] === left && seq[i + 1] === right) {
          merged.push(id);
          i++;
        } else merged.push(seq[i]!);
      }
      words[w] = merged;
      addPairs(w, 1, touched);
    }
    pairWords.delete(key);
    pairCounts.delete(key);
    for (const k of touched) {
      const c = pairCounts.get(k);
      if (c !== undefined && c > 0) heap.push(c, k);
    }
  }
  return new ByteLevelBpeTokenizer(merges, specials, stops, {
    ...(options.maxLength === undefined ? {} : { maxLength: options.maxLength }),
    ...(options.chatTemplate === undefined ? {} : { chatTemplate: options.chatTemplate }),
    pretokenizer: options.pretokenizer ?? "gpt2",
  });
}

/** A binary max-heap of [count, key], ties broken by the smaller key. */
class MaxHeap {
  private readonly items: [number, number][] = [];

  push(count: number, key: number): void {
    const items = this.items;
    items.push([count, key]);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.above(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): [number, number] | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < items.length && this.above(items[l]!, items[best]!)) best = l;
        if (r < items.length && this.above(items[r]!, items[best]!)) best = r;
        if (best === i) break;
        [items[i], items[best]] = [items[best]!, items[i]!];
        i = best;
      }
    }
    return top;
  }

  private above(a: [number, number], b: [number, number]): boolean {
    return a[0] > b[0] || (a[0] === b[0] && a[1] < b[1]);
  }
}
