import * as tokenizers from "@huggingface/tokenizers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";
import { ByteLevelBpeTokenizer, DEFAULT_SPECIAL_TOKENS, TokenizerError } from "./tokenizer.js";
import { trainTokenizer } from "./train-tokenizer.js";

/** A small tool-use corpus in the chat format: what the built-in domain's transcripts look like. */
function corpus(n: number, seed: number): string[] {
  const rng = Rng.fromSeed(seed);
  const pick = <T>(xs: readonly T[]): T => xs[rng.nextUint32() % xs.length]!;
  const names = ["Ada", "Bob", "Chloé", "Dmitri", "Eun-ji", "Farah"];
  const tools = ["get_balance", "transfer", "lookup_order", "cancel_order", "search_flights"];
  const cities = ["Paris", "Zürich", "東京", "São Paulo", "Kraków"];
  return Array.from({ length: n }, () => {
    const tool = pick(tools);
    const amount = (rng.nextUint32() % 100_000) / 100;
    const who = pick(names);
    return (
      `<|im_start|>system\nYou are a helpful assistant with tools.<|im_end|>\n` +
      `<|im_start|>user\nHi, I'm ${who}. Please ${tool.replace("_", " ")} for ${pick(cities)}: ${amount} EUR 🙂<|im_end|>\n` +
      `<|im_start|>assistant\n<think>\nThe user wants ${tool}.\n</think>\n\n` +
      `<tool_call>\n{"name": "${tool}", "arguments": {"account": "${who.toLowerCase()}", "amount": ${amount}}}\n</tool_call><|im_end|>\n` +
      `<|im_start|>user\n<tool_response>\n{"status": "ok", "balance": ${amount * 2}}\n</tool_response><|im_end|>\n` +
      `<|im_start|>assistant\n<execution_result>{"ok": true}</execution_result>Done, ${who}!<|im_end|>`
    );
  });
}

/** The surface of `@huggingface/tokenizers` used here (its declarations do not resolve under NodeNext). */
interface HfTokenizer {
  encode(text: string): { ids: number[] };
  decode(ids: number[], options: { skip_special_tokens: boolean }): string;
}
const HfTokenizer = tokenizers.Tokenizer as unknown as new (tokenizer: object, config: object) => HfTokenizer;

const texts = corpus(300, 1);
const tokenizer = trainTokenizer(texts, { vocabSize: 600 });
const hf = (() => {
  const { tokenizerJson, tokenizerConfig } = tokenizer.toHuggingFace();
  return new HfTokenizer(tokenizerJson, tokenizerConfig);
})();

/** Strings mixing arbitrary Unicode, whitespace runs and special-token strings. */
const text = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string({ unit: "grapheme" }),
      fc.constantFrom(...DEFAULT_SPECIAL_TOKENS, " ", "  ", "\n\n", "\t", "'s", "'ll", " 123", '{"a": 1}', "<|im_", "</tool"),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(""));

describe("trainTokenizer", () => {
  it("fills the requested vocabulary with merges learned from the corpus", () => {
    expect(tokenizer.vocabSize).toBe(600);
    expect(tokenizer.merges.length).toBeGreaterThanOrEqual(600 - 256 - DEFAULT_SPECIAL_TOKENS.length);
    // Learned merges compress held-out text of the same domain well below one token per byte.
    const heldOut = corpus(20, 99).join("");
    const ids = tokenizer.encode(heldOut);
    expect(ids.length / new TextEncoder().encode(heldOut).length).toBeLessThan(0.35);
  });

  it("is deterministic", () => {
    expect(trainTokenizer(texts, { vocabSize: 600 }).merges).toEqual(tokenizer.merges);
  });

  it("stops merging below minFrequency, and refuses a vocabulary too small for its tokens", () => {
    const small = trainTokenizer(["abab abab"], { vocabSize: 1000, minFrequency: 2 });
    expect(small.vocabSize).toBeLessThan(1000);
    expect(() => trainTokenizer(texts, { vocabSize: 260 })).toThrow(/vocabSize must be at least 256 byte tokens plus 11 special tokens/);
  });
});

describe("ByteLevelBpeTokenizer", () => {
  it("keeps every chat-format marker a single token", () => {
    for (const special of DEFAULT_SPECIAL_TOKENS) {
      const ids = tokenizer.encode(`x${special}y`);
      expect(ids).toContain(tokenizer.tokenToId(special));
      expect(tokenizer.decode([tokenizer.tokenToId(special)!])).toBe(special);
    }
    expect(tokenizer.stopTokenIds).toEqual([tokenizer.tokenToId("<|im_end|>"), tokenizer.tokenToId("<|endoftext|>")]);
  });

  it("round-trips any Unicode string", () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(tokenizer.decode(tokenizer.encode(s))).toBe(s);
      }),
      { numRuns: 500 },
    );
    for (const t of texts.slice(0, 20)) expect(tokenizer.decode(tokenizer.encode(t))).toBe(t);
  });

  it("says where input it cannot represent is", () => {
    expect(() => tokenizer.encode("ok \ud800 then")).toThrow(TokenizerError);
    expect(() => tokenizer.encode("ok \ud800 then")).toThrow(/lone UTF-16 surrogate \(U\+D800\) at index 3/);
    expect(() => tokenizer.encode("\udc00")).toThrow(/U\+DC00\) at index 0/);
    expect(() => tokenizer.decode([1, 600])).toThrow(/token id 600 is outside the vocabulary \(0\.\.599\)/);
  });

  it("encodes and decodes exactly as Hugging Face tokenizers does with the exported files", () => {
    for (const t of texts.slice(0, 30)) {
      expect(tokenizer.encode(t)).toEqual(hf.encode(t).ids);
    }
    fc.assert(
      fc.property(text, (s) => {
        const ids = tokenizer.encode(s);
        expect(ids).toEqual(hf.encode(s).ids);
        // (Hugging Face's decode refuses an empty id list.)
        if (ids.length > 0) expect(hf.decode(ids, { skip_special_tokens: false })).toBe(s);
      }),
      { numRuns: 500 },
    );
  });

  it("carries a chat template through its Hugging Face files", () => {
    const template = "{%- for m in messages %}{{ m.content }}{%- endfor %}";
    const chat = trainTokenizer(texts, { vocabSize: 300, chatTemplate: template });
    const { tokenizerJson, tokenizerConfig } = chat.toHuggingFace();
    expect(tokenizerConfig.chat_template).toBe(template);
    expect(ByteLevelBpeTokenizer.fromHuggingFace(tokenizerJson, tokenizerConfig, "model").chatTemplate).toBe(template);
    expect(tokenizer.toHuggingFace().tokenizerConfig).not.toHaveProperty("chat_template");
  });

  it("with the isolated pretokenizer, gives a word one token sequence after a space and inside JSON, as Hugging Face does", () => {
    const isolated = trainTokenizer(texts, { vocabSize: 600, pretokenizer: "isolated" });
    const word = isolated.encode("ada");
    expect(isolated.encode("hi ada.").slice(-1 - word.length, -1)).toEqual(word);
    expect(isolated.encode('{"name":"ada"}')).toEqual(expect.arrayContaining(word));
    const { tokenizerJson, tokenizerConfig } = isolated.toHuggingFace();
    const hfIsolated = new HfTokenizer(tokenizerJson, tokenizerConfig);
    fc.assert(
      fc.property(text, (s) => {
        const ids = isolated.encode(s);
        expect(ids).toEqual(hfIsolated.encode(s).ids);
        expect(isolated.decode(ids)).toBe(s);
      }),
      { numRuns: 300 },
    );
    const copy = ByteLevelBpeTokenizer.fromHuggingFace(JSON.parse(JSON.stringify(tokenizerJson)), tokenizerConfig, "model");
    expect(copy.pretokenizer).toBe("isolated");
    expect(copy.encode(texts[0]!)).toEqual(isolated.encode(texts[0]!));
  });

  it("writes a token that is literally `__proto__` or `constructor` into its vocabulary", () => {
    // A tokenizer file's merges may build any string; these build the two words piece by piece.
    const merges: [string, string][] = [
      ["_", "_"],
      ["__", "p"],
      ["__p", "r"],
      ["__pr", "o"],
      ["__pro", "t"],
      ["__prot", "o"],
      ["__proto", "__"],
      ...Array.from("onstructor", (ch, i): [string, string] => ["constructor".slice(0, i + 1), ch]),
    ];
    const odd = new ByteLevelBpeTokenizer(merges, ["<|end|>"], ["<|end|>"]);
    // 256 byte tokens, then one per merge: `__proto__` is merge 6's (262), `constructor` merge 16's (272).
    expect(odd.tokenToId("__proto__")).toBe(262);
    expect(odd.encode("constructor")).toEqual([272]);
    const { tokenizerJson, tokenizerConfig } = odd.toHuggingFace();
    expect("toString" in tokenizerJson.model.vocab).toBe(false);
    const written = JSON.parse(JSON.stringify(tokenizerJson)) as typeof tokenizerJson;
    expect(Object.keys(written.model.vocab)).toHaveLength(273);
    expect([written.model.vocab.__proto__, written.model.vocab.constructor]).toEqual([262, 272]);
    const copy = ByteLevelBpeTokenizer.fromHuggingFace(written, tokenizerConfig, "model");
    expect(copy.tokenToId("__proto__")).toBe(262);
    expect(copy.encode("constructor __proto__")).toEqual(odd.encode("constructor __proto__"));
    expect(new HfTokenizer(written, tokenizerConfig).encode("constructor __proto__").ids).toEqual(odd.encode("constructor __proto__"));
  });

  it("reads back the Hugging Face files it writes", () => {
    const { tokenizerJson, tokenizerConfig } = tokenizer.toHuggingFace();
    const copy = ByteLevelBpeTokenizer.fromHuggingFace(JSON.parse(JSON.stringify(tokenizerJson)), tokenizerConfig, "model");
    expect(copy.vocabSize).toBe(tokenizer.vocabSize);
    expect(copy.stopTokenIds).toEqual(tokenizer.stopTokenIds);
    expect(copy.encode(texts[0]!)).toEqual(tokenizer.encode(texts[0]!));
    const broken = { ...tokenizerJson, model: { ...tokenizerJson.model, type: "WordPiece" } };
    expect(() => ByteLevelBpeTokenizer.fromHuggingFace(broken, {}, "model")).toThrow(/model\/tokenizer.json: model.type/);
  });
});
