import { describe, expect, it } from "vitest";
import { defaultProcess, partialRatio, ratio, rerank } from "./fuzz.js";

describe("rapidfuzz's scores", () => {
  it("ratio is the normalised Indel similarity (rapidfuzz's documented example)", () => {
    // One insertion over 14 + 15 characters: (1 - 1/29) * 100.
    expect(ratio("this is a test", "this is a test!")).toBeCloseTo(96.551724137931, 10);
    expect(ratio("", "")).toBe(100);
    expect(ratio("abc", "xyz")).toBe(0);
  });

  it("partial_ratio finds the best window of the shorter string in the longer (rapidfuzz's documented examples)", () => {
    expect(partialRatio("this is a test", "this is a test!")).toBe(100);
    // partial_ratio_alignment("a certain string", "cetain"): 83.33333333333334 over "certai".
    expect(partialRatio("a certain string", "cetain")).toBeCloseTo(83.33333333333334, 10);
    expect(partialRatio("cetain", "a certain string")).toBeCloseTo(83.33333333333334, 10);
    expect(partialRatio("abc", "xyz")).toBe(0);
  });

  it("needles longer than one machine word score the same as short ones", () => {
    const needle = "crossing bridge rice noodles with free range chicken";
    expect(partialRatio(needle, `jintugo ${needle} clear soup`)).toBe(100);
    // One letter of 52 changed: LCS 51 of 52 + 52 → (1 - 2/104) * 100.
    expect(partialRatio(needle.replace("free", "fref"), `jintugo ${needle} clear soup`)).toBeCloseTo((1 - 2 / 104) * 100, 10);
  });

  it("default_process turns non-word characters into spaces, trims and lowercases", () => {
    expect(defaultProcess("  Hello, World!")).toBe("hello  world");
    expect(defaultProcess("Café_No.1")).toBe("café_no 1");
  });
});

describe("rerank", () => {
  it("sorts by score with ties in insertion order, and maps identical docs to the last id", () => {
    const docs = new Map([
      ["a", "noodle soup"],
      ["b", "rice"],
      ["c", "noodle soup"],
      ["d", "beef noodles"],
    ]);
    const ranked = rerank("Noodle", docs);
    expect(ranked.map((r) => [r.id, r.score])).toEqual([
      ["c", 100],
      ["c", 100],
      ["d", 100],
      // "rice" in "noodle": only the window "e" (the suffix starting at a letter of "rice")
      // is scored: LCS 1, so 1 - (4 + 1 - 2) / 5 = 0.4.
      ["b", 40],
    ]);
  });
});
