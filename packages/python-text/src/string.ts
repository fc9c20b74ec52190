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
