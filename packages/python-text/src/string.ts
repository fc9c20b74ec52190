/**
 * How Python shows and orders a `str`. JavaScript strings are UTF-16; Python's are code points,
 * which changes the order of text beyond U+FFFF and what `repr` escapes.
 */

/** Characters `str.isprintable()` rejects (the space aside), which `repr` escapes. */
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

/**
 * `repr(s)` of a Python string: single quotes unless the text holds `'` and no `"`; `\\`, `\n`,
 * `\r`, `\t` and the quote escaped; other non-printable characters as `\xhh`, `\uhhhh` or
 * `\Uhhhhhhhh` (a lone surrogate included); everything printable, non-ASCII too, as it is.
 */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of s) {
    if (char === quote || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && NON_PRINTABLE.test(char)) {
      const code = char.codePointAt(0)!;
      out += code <= 0xff ? `\\x${hex(code, 2)}` : code <= 0xffff ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
    } else out += char;
  }
  return out + quote;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

/**
 * Python's order of two strings (`a < b`, `sorted`, `json.dumps(sort_keys=True)`): by code
 * point. JavaScript's `<` and default sort compare UTF-16 units, which puts `"😀"` (a surrogate
 * pair) before `"\uffff"`. Negative, zero or positive.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate starts a code point above U+FFFF, which outranks every other UTF-16 unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Sort strings in place by code point, as Python's `sorted` does; returns the array. */
export function sortCodePoints(strings: string[]): string[] {
  // Without surrogates UTF-16 order is code point order, and the default sort is faster.
  return strings.some((s) => SURROGATE.test(s)) ? strings.sort(compareCodePoints) : strings.sort();
}

/** Code points `str.isspace()` accepts (and `str.split()`/`str.strip()` drop): more than JavaScript's `\s`, without U+FEFF. */
const WHITESPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
  0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** Code points `str.splitlines()` breaks at (`\r\n` counts as one break). */
const LINE_BREAKS = new Set([0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029]);

/** Whether a character is whitespace to Python (`ch.isspace()`). */
export function isSpace(ch: string): boolean {
  return WHITESPACE.has(ch.charCodeAt(0));
}

/** `s.splitlines()`: Python's line breaks (`\v`, `\f`, `\x1c`–`\x1e`, U+0085, U+2028, U+2029 too); no empty last line. */
export function splitlines(s: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (!LINE_BREAKS.has(code)) continue;
    lines.push(s.slice(start, i));
    if (code === 0x0d && s.charCodeAt(i + 1) === 0x0a) i++;
    start = i + 1;
  }
  if (start < s.length) lines.push(s.slice(start));
  return lines;
}

/** `s.split()` with no separator: runs of whitespace separate, empty pieces are dropped. */
export function splitWhitespace(s: string): string[] {
  const parts: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (WHITESPACE.has(s.charCodeAt(i))) {
      if (start >= 0) parts.push(s.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  if (start >= 0) parts.push(s.slice(start));
  return parts;
}

/** `s.strip(chars)`: whitespace from both ends, or any of the characters of `chars`. */
export function strip(s: string, chars?: string): string {
  return rstrip(lstrip(s, chars), chars);
}

/** `s.lstrip(chars)`. */
export function lstrip(s: string, chars?: string): string {
  const drop = dropped(chars);
  if (drop !== undefined) {
    let start = 0;
    while (start < s.length && drop.has(s.charCodeAt(start))) start++;
    return start === 0 ? s : s.slice(start);
  }
  const set = new Set(chars);
  let start = 0;
  while (start < s.length) {
    const ch = String.fromCodePoint(s.codePointAt(start)!);
    if (!set.has(ch)) break;
    start += ch.length;
  }
  return s.slice(start);
}

/** `s.rstrip(chars)`. */
export function rstrip(s: string, chars?: string): string {
  const drop = dropped(chars);
  if (drop !== undefined) {
    let end = s.length;
    while (end > 0 && drop.has(s.charCodeAt(end - 1))) end--;
    return end === s.length ? s : s.slice(0, end);
  }
  const set = new Set(chars);
  let end = s.length;
  while (end > 0) {
    // A low surrogate after a high one ends a character beyond U+FFFF.
    const pair = end >= 2 && (s.charCodeAt(end - 1) & 0xfc00) === 0xdc00 && (s.charCodeAt(end - 2) & 0xfc00) === 0xd800;
    const ch = s.slice(pair ? end - 2 : end - 1, end);
    if (!set.has(ch)) break;
    end -= ch.length;
  }
  return s.slice(0, end);
}

/** The strip sets of the `chars` arguments seen so far (callers pass a few constants). */
const stripSets = new Map<string, Set<number>>();

/**
 * The code units to strip, when code units suffice: whitespace (all in the BMP), or `chars`
 * without surrogates, which then can never match half of a pair. Undefined otherwise.
 */
function dropped(chars: string | undefined): Set<number> | undefined {
  if (chars === undefined) return WHITESPACE;
  let set = stripSets.get(chars);
  if (set === undefined) {
    if (SURROGATE.test(chars)) return undefined;
    if (stripSets.size >= 64) stripSets.clear();
    set = new Set(Array.from(chars, (ch) => ch.charCodeAt(0)));
    stripSets.set(chars, set);
  }
  return set;
}

/** `len(s)`: code points, so a character beyond U+FFFF counts once. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 1; i < s.length; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xdc00 && (s.charCodeAt(i - 1) & 0xfc00) === 0xd800) n--;
  }
  return n;
}
