import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseVerdict, unfenced, VerdictParseError } from "./verdict.js";

const verdict = {
  high_level_understanding_of_the_question: "q",
  analysis_of_if_focus_on: "f",
  analysis_of_pass_condition: "p",
  analysis_of_failure_examples: "e",
  answer: true,
};

describe("parseVerdict", () => {
  it("reads a verdict", () => {
    expect(parseVerdict(JSON.stringify(verdict))).toEqual(verdict);
  });

  it("tolerates a thinking block and a code fence around the JSON", () => {
    expect(parseVerdict(`<think>hmm</think>\n\`\`\`json\n${JSON.stringify(verdict)}\n\`\`\``)).toEqual(verdict);
  });

  it("ignores fields the schema does not name", () => {
    expect(parseVerdict(JSON.stringify({ ...verdict, confidence: 0.9 }))).toEqual(verdict);
  });

  it("rejects empty, non-JSON and schema-violating replies", () => {
    expect(() => parseVerdict(null)).toThrow(new VerdictParseError("empty judge reply"));
    expect(() => parseVerdict("  ")).toThrow(VerdictParseError);
    expect(() => parseVerdict("true")).toThrow(/violates the verdict schema \(\(root\): /);
    expect(() => parseVerdict("Yes.")).toThrow(/^judge reply is not JSON/);
    expect(() => parseVerdict(JSON.stringify({ ...verdict, answer: "true" }))).toThrow(/answer: /);
    const { analysis_of_pass_condition: _dropped, ...partial } = verdict;
    expect(() => parseVerdict(JSON.stringify(partial))).toThrow(/analysis_of_pass_condition: /);
  });
});

describe("unfenced", () => {
  it("takes what the fence pattern captured, on short texts where its backtracking is cheap", () => {
    // The pattern this replaced (its backtracking is cheap on these short texts).
    const reference = (text: string): string => /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text)?.[1] ?? text;
    const pieces = ["`", "```", "json", "js", " ", "\n", "\t", "{}", "x", "\u00a0"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const text = parts.join("").trim();
        expect(unfenced(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
    expect(unfenced("```json\n{}\n```")).toBe("{}");
    expect(unfenced("``````")).toBe("");
    expect(unfenced("`````")).toBe("`````");
  });
});
