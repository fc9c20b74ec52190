/**
 * Small scanners for the converters' patterns. Upstream writes them as regular expressions with
 * lazy and nested quantifiers, which backtrack for ages on some model output; these walk the text
 * once and return what those expressions capture.
 */

const SPACE = /\s/;

/** Whether `char` is whitespace as a JavaScript (and, for these inputs, Python) `\s` sees it. */
export function isSpace(char: string | undefined): boolean {
  return char !== undefined && SPACE.test(char);
}

/** The first index at or after `at` that is not whitespace (`text.length` at the end). */
export function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && isSpace(text[i])) i++;
  return i;
}

/** The first index at or after `at` holding `char` before any newline, or -1 (`[^\n]*?` followed by `char`). */
export function onLine(text: string, char: string, at: number): number {
  for (let i = at; i < text.length; i++) {
    if (text[i] === char) return i;
    if (text[i] === "\n") return -1;
  }
  return -1;
}

/**
 * Every `[…]` of `text` as `/\[([^\n]*?)\]/g` finds them: the insides, left to right. A `[`
 * whose line has no later `]` starts no match, and nor does any other `[` before that newline.
 */
export function bracketed(text: string): string[] {
  const insides: string[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf("[", at);
    if (open === -1) return insides;
    let i = open + 1;
    while (i < text.length && text[i] !== "]" && text[i] !== "\n") i++;
    if (i < text.length && text[i] === "]") insides.push(text.slice(open + 1, i));
    at = i + 1;
  }
}

/** The index of the newline ending the line that `at` is on, or `text.length`. */
export function lineEnd(text: string, at: number): number {
  const end = text.indexOf("\n", at);
  return end === -1 ? text.length : end;
}

/** The first index of `search` starting in `[from, to)`, or -1; looks no further than `to`. */
export function indexBefore(text: string, search: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (text.startsWith(search, i)) return i;
  return -1;
}

/** The first index at or after `from` holding `char` or a newline (`text.length` if neither comes). */
export function scanTo(text: string, char: string, from: number): number {
  let i = from;
  while (i < text.length && text[i] !== char && text[i] !== "\n") i++;
  return i;
}
