import fc from "fast-check";
import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { formatRehearsalSetting, parseRehearsalSetting } from "./setting.js";
import { charTokenizer, task } from "./testing/bank.js";
import { estimateTokens, tokenCounter, truncateToTokens } from "./tokens.js";
import { addUsage, MeteredPolicy, totalTokens } from "./usage.js";

describe("estimateTokens (no tokenizer)", () => {
  it.each([
    ["", 0],
    ["hello", 1],
    ["balance", 2], // 7 letters: ceil(7/5)
    ["o12", 3], // a letter run and two digits
    ["a b", 2], // a single blank joins the next word
    ["a   b", 3], // a run of blanks counts once
    ['{"a":1}', 5], // {" a ": 1 }: ceil(2/2) + 1 + ceil(3/2) + 1 + ceil(1/2)
    ["x\ny", 3],
    ["返金", 2],
  ])("%j → %d", (text, expected) => {
    expect(estimateTokens(text)).toBe(expected);
  });

  it("counts joined text as the sum of its parts, less at most one for the piece they share (property)", () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => estimateTokens(a + b) >= estimateTokens(a) + estimateTokens(b) - 1));
  });
});

describe("tokenCounter", () => {
  it("counts with the tokenizer when there is one", () => {
    expect(tokenCounter(charTokenizer)).toMatchObject({ exact: true });
    expect(tokenCounter(charTokenizer).count("balance 7")).toBe(9);
    expect(tokenCounter()).toMatchObject({ exact: false });
    expect(tokenCounter().count("balance 7")).toBe(3);
  });

  it("falls back to the estimate for text the tokenizer cannot encode", () => {
    const closed = {
      ...charTokenizer,
      encode: () => {
        throw new Error("unknown word");
      },
    };
    expect(tokenCounter(closed).count("balance 7")).toBe(3);
  });
});

describe("truncateToTokens", () => {
  const chars = tokenCounter(charTokenizer);
  it("keeps text that fits and cuts the rest at a word, marked", () => {
    expect(truncateToTokens("look up ada", 11, chars)).toBe("look up ada");
    expect(truncateToTokens("look up ada then buy", 12, chars)).toBe("look up ada…");
    expect(truncateToTokens("abcdefghij", 5, chars)).toBe("abcd…");
    expect(truncateToTokens("abc", 0, chars)).toBe("");
  });

  it("never exceeds the budget (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.integer({ min: 0, max: 40 }), fc.boolean(), (text, budget, exact) => {
        const counter = exact ? chars : tokenCounter();
        expect(counter.count(truncateToTokens(text, budget, counter))).toBeLessThanOrEqual(budget);
      }),
    );
  });
});

describe("rehearsal settings", () => {
  it("parses none, parallel:N and sequential:N, and prints them back", () => {
    expect(parseRehearsalSetting("none")).toEqual({ mode: "none" });
    expect(parseRehearsalSetting("parallel:2")).toEqual({ mode: "parallel", attempts: 2 });
    expect(parseRehearsalSetting(" sequential:12 ")).toEqual({ mode: "sequential", attempts: 12 });
    expect(parseRehearsalSetting({ mode: "parallel", attempts: 3 })).toEqual({ mode: "parallel", attempts: 3 });
    for (const text of ["none", "parallel:1", "sequential:3"]) expect(formatRehearsalSetting(parseRehearsalSetting(text))).toBe(text);
  });

  it.each(["parallel", "parallel:0", "sequential:-1", "serial:2", "parallel:2x", ""])("refuses %j naming the grammar", (text) => {
    expect(() => parseRehearsalSetting(text)).toThrow(/expected none, parallel:N or sequential:N/);
  });
});

describe("MeteredPolicy", () => {
  it("counts returned token ids, or estimates prompt and output for policies that return none", async () => {
    const exact = MeteredPolicy.wrap(new ScriptedPolicy("p", () => "hello", { tokenizer: charTokenizer }), tokenCounter());
    const estimated = MeteredPolicy.wrap(new ScriptedPolicy("p", () => "hello"), tokenCounter());
    for (const policy of [exact, estimated]) {
      await policy.generate({ role: "reflect", messages: task.messages, tools: [], sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 8, stop: [] } });
    }
    expect(exact.usage.reflect).toMatchObject({ generations: 1, outputTokens: 5, estimated: 0 });
    expect(exact.usage.reflect?.promptTokens).toBeGreaterThan(50);
    expect(estimated.usage.reflect).toMatchObject({ generations: 1, outputTokens: 1, estimated: 1 });
    expect(totalTokens(addUsage(exact.usage, estimated.usage))).toBe(exact.usage.reflect!.promptTokens + estimated.usage.reflect!.promptTokens + 6);
  });

  it("is token-continuable exactly when the policy it wraps is", () => {
    const plain = MeteredPolicy.wrap(new ScriptedPolicy("p", () => ""), tokenCounter());
    expect("continuePrompt" in plain).toBe(false);
    const inner = Object.assign(new ScriptedPolicy("p", () => ""), { continuePrompt: () => [1, 2, 3] });
    const wrapped = MeteredPolicy.wrap(inner, tokenCounter()) as MeteredPolicy & { continuePrompt: () => number[] };
    expect(wrapped.continuePrompt()).toEqual([1, 2, 3]);
  });
});
