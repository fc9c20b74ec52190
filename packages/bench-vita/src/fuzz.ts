import { roundFloat } from "@envace/python-text";

/*
 * The fuzzy matching VitaBench ranks searches and resolves addresses with: thefuzz 0.22 over
 * rapidfuzz 3 (its pure-Python implementation, which gives the same scores as the compiled one).
 * Strings are compared by code point, as Python does.
 */

/** rapidfuzz `default_process`: every non-word character to a space, trimmed, lowercased. */
export function defaultProcess(text: string): string {
  return text
    .replace(/[^\p{L}\p{N}_]/gu, " ")
    .trim()
    .toLowerCase();
}

function codePoints(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) out.push(ch.codePointAt(0)!);
  return out;
}

/**
 * A needle prepared for bit-parallel LCS (Hyyrö): for each code point, the bits of the positions
 * it occupies, in 32-bit words.
 */
interface Needle {
  readonly length: number;
  readonly words: number;
  readonly masks: ReadonlyMap<number, Uint32Array>;
}

function prepare(needle: readonly number[]): Needle {
  const words = Math.max(1, Math.ceil(needle.length / 32));
  const masks = new Map<number, Uint32Array>();
  needle.forEach((ch, i) => {
    let mask = masks.get(ch);
    if (mask === undefined) masks.set(ch, (mask = new Uint32Array(words)));
    mask[i >>> 5]! |= 1 << (i & 31);
  });
  return { length: needle.length, words, masks };
}

/** The length of the longest common subsequence of the needle and `text[start:end]`. */
function lcsLength(needle: Needle, text: readonly number[], start: number, end: number): number {
  const n = needle.length;
  if (n === 0 || end <= start) return 0;
  if (needle.words === 1) {
    let v = 0xffffffff;
    for (let j = start; j < end; j++) {
      const m = needle.masks.get(text[j]!);
      if (m === undefined) continue;
      const u = v & m[0]!;
      v = (((v + u) >>> 0) | (v - u)) >>> 0;
    }
    let count = 0;
    for (let bits = ~v & (n === 32 ? 0xffffffff : (1 << n) - 1); bits !== 0; bits &= bits - 1) count++;
    return count;
  }
  const v = new Uint32Array(needle.words).fill(0xffffffff);
  for (let j = start; j < end; j++) {
    const m = needle.masks.get(text[j]!);
    let carry = 0;
    for (let w = 0; w < needle.words; w++) {
      const vw = v[w]!;
      const u = m === undefined ? 0 : (vw & m[w]!) >>> 0;
      const sum = vw + u + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      v[w] = ((sum >>> 0) | (vw - u)) >>> 0;
    }
  }
  let count = 0;
  for (let w = 0; w < needle.words; w++) {
    const bitsInWord = Math.min(32, n - w * 32);
    for (let bits = ~v[w]! & (bitsInWord === 32 ? 0xffffffff : (1 << bitsInWord) - 1); bits !== 0; bits &= bits - 1) count++;
  }
  return count;
}

/** rapidfuzz `Indel.normalized_similarity` of the needle and `text[start:end]`. */
function indelSimilarity(needle: Needle, text: readonly number[], start: number, end: number): number {
  const maximum = needle.length + (end - start);
  if (maximum === 0) return 1;
  const distance = maximum - 2 * lcsLength(needle, text, start, end);
  return 1 - distance / maximum;
}

/** rapidfuzz `fuzz.ratio` (0–100, unrounded). */
export function ratio(s1: string, s2: string): number {
  const a = codePoints(s1);
  const b = codePoints(s2);
  return indelSimilarity(prepare(a), b, 0, b.length) * 100;
}

/** rapidfuzz's `_partial_ratio_impl` (assumes `shorter.length <= longer.length`): the best window's similarity. */
function partialRatioImpl(shorter: readonly number[], longer: readonly number[]): number {
  const chars = new Set(shorter);
  const needle = prepare(shorter);
  const len1 = shorter.length;
  const len2 = longer.length;
  let best = 0;
  const consider = (start: number, end: number): boolean => {
    const score = indelSimilarity(needle, longer, start, end);
    if (score > best) best = score;
    return best === 1;
  };
  for (let i = 1; i < len1; i++) {
    if (chars.has(longer[i - 1]!) && consider(0, i)) return 100;
  }
  for (let i = 0; i < len2 - len1; i++) {
    if (chars.has(longer[i + len1 - 1]!) && consider(i, i + len1)) return 100;
  }
  for (let i = Math.max(0, len2 - len1); i < len2; i++) {
    if (chars.has(longer[i]!) && consider(i, len2)) return 100;
  }
  return best * 100;
}

/** rapidfuzz `fuzz.partial_ratio` (0–100, unrounded). */
export function partialRatio(s1: string, s2: string): number {
  if (s1.length === 0 && s2.length === 0) return 100;
  const a = codePoints(s1);
  const b = codePoints(s2);
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  let score = partialRatioImpl(shorter, longer);
  if (score !== 100 && a.length === b.length) score = Math.max(score, partialRatioImpl(longer, shorter));
  return score;
}

/** thefuzz's `int(round(score))`: Python rounds half to even. */
export function roundScore(score: number): number {
  return roundFloat(score, 0);
}

/** One ranked candidate: its id, its text and thefuzz's rounded score. */
export interface Ranked {
  readonly id: string;
  readonly doc: string;
  readonly score: number;
}

/**
 * VitaBench's `rerank(query, docs)`: thefuzz `process.extract(query, docs.values(),
 * scorer=fuzz.partial_ratio, limit=None)` with both sides through `default_process`, sorted on
 * the unrounded score (ties in insertion order), mapped back to ids through the reversed dict, so
 * identical docs all name the last id that has that doc.
 */
export function rerank(query: string, docs: ReadonlyMap<string, string>): Ranked[] {
  const reverse = new Map<string, string>();
  for (const [id, doc] of docs) reverse.set(doc, id);
  const processedQuery = defaultProcess(query);
  const scored = [...docs.values()].map((doc, index) => ({ doc, index, raw: partialRatio(processedQuery, defaultProcess(doc)) }));
  scored.sort((x, y) => y.raw - x.raw || x.index - y.index);
  return scored.map(({ doc, raw }) => ({ id: reverse.get(doc)!, doc, score: roundScore(raw) }));
}
