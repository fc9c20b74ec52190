import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indent } from "./task.js";

/** The reference: every piece `str.splitlines(keepends=True)` gives, tabbed unless it is only whitespace. */
function indentByPattern(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- Python's line boundaries include these separators.
      .split(/(?<=\r\n|\r(?!\n)|[\n\v\f\x1c\x1d\x1e\x85\u2028\u2029])/)
      .map((line) => (line.trim() === "" ? line : `\t${line}`))
      .join("")
  );
}

describe("indent (textwrap.indent of a task's user instructions)", () => {
  it("tabs each line that is not only whitespace, at every line boundary Python knows", () => {
    expect(indent("")).toBe("");
    expect(indent("a\nb")).toBe("\ta\n\tb");
    expect(indent("a\r\n \r\nb\r")).toBe("\ta\r\n \r\n\tb\r");
    expect(indent("a\rb\vc\fd\x1ce\x1df\x1eg\x85h\u2028i\u2029j")).toBe("\ta\r\tb\v\tc\f\td\x1c\te\x1d\tf\x1e\tg\x85\th\u2028\ti\u2029\tj");
    // A tab, U+3000 and U+FEFF are whitespace to trim(), so such a line keeps no tab.
    expect(indent("x\n\t\u3000\ufeff\n\ny")).toBe("\tx\n\t\u3000\ufeff\n\n\ty");
  });

  it("gives what the splitlines pattern gives, on any text", () => {
    const piece = fc.constantFrom("a", " ", "\t", "\r", "\n", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029", "\u3000", "é");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join("");
        expect(indent(text)).toBe(indentByPattern(text));
      }),
      { numRuns: 2000 },
    );
  });
});
