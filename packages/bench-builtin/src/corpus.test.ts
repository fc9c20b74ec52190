import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { domainCorpus, vocabulary, wordsOf } from "./corpus.js";
import { generateTasks, randomWorld } from "./generate.js";
import { renderPlain } from "./gold.js";
import { ITEM_NAMES, USER_NAMES } from "./names.js";
import { SYSTEM_PROMPT_SHORT } from "./prompt.js";
import { Rng } from "./random.js";
import { Shop, ToolName } from "./tools.js";

const vocab = new Set(vocabulary());
const outside = (text: string) => wordsOf(text).filter((word) => !vocab.has(word));

describe("wordsOf", () => {
  it("splits into letter runs, digit runs and single symbols", () => {
    expect(wordsOf('<tool_call>{"qty":12}')).toEqual(["<", "tool", "_", "call", ">", "{", '"', "qty", '"', ":", "12", "}"]);
  });
});

describe("the domain corpus", () => {
  it("is deterministic and built from the train split only", () => {
    expect(domainCorpus({ tasks: 20 })).toEqual(domainCorpus({ tasks: 20 }));
    const test = new Set(generateTasks({ seed: 0, count: 20, split: "test" }).map((t) => renderPlain(t.reference!)));
    expect(domainCorpus({ tasks: 20 }).some((doc) => test.has(doc))).toBe(false);
  });

  it("holds a closed vocabulary of a few hundred words", () => {
    expect(vocab.size).toBeGreaterThan(200);
    expect(vocab.size).toBeLessThan(400);
    for (const name of [...USER_NAMES, ...ITEM_NAMES, "0", "99", "o12", "NOT_FOUND"]) for (const w of wordsOf(name)) expect(vocab.has(w)).toBe(true);
  });

  it("covers every word of held-out gold dialogues, whatever the seed", () => {
    for (const seed of [101, 202]) {
      for (const task of generateTasks({ seed, count: 300, split: "test" })) expect(outside(renderPlain(task.reference!))).toEqual([]);
    }
    for (const task of generateTasks({ seed: 3, count: 50, split: "test", systemPrompt: SYSTEM_PROMPT_SHORT })) {
      expect(outside(renderPlain(task.reference!))).toEqual([]);
    }
  });

  it("covers every answer, result or error, the tools give to calls in the domain's vocabulary", () => {
    const value = fc.oneof(fc.constantFrom(...USER_NAMES, ...ITEM_NAMES, "o1", "o2", "o3", "o4", "o5"), fc.integer({ min: 0, max: 30 }));
    const args = fc.dictionary(fc.constantFrom("name", "id", "user", "item", "qty", "from", "to", "amount", "price"), value, { maxKeys: 3 });
    fc.assert(
      fc.property(fc.nat(), fc.array(fc.tuple(fc.constantFrom(...ToolName.options, "kelo"), args), { minLength: 1, maxLength: 4 }), (seed, calls) => {
        const shop = new Shop(randomWorld(new Rng(seed)));
        for (const [name, a] of calls) {
          const result = shop.call(name, a);
          expect(outside(JSON.stringify(result.ok ? result.content : { error: result.error }))).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
