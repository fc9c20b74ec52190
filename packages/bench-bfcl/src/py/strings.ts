/**
 * Python `str` methods whose JavaScript look-alikes differ: `splitlines` knows more line
 * breaks, `split()` and `strip()` another whitespace set, and `len` counts code points.
 */

/** Code points `str.isspace()` accepts. */
const WHITESPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
  0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);
/** Code points `str.splitlines()` breaks at (`\r\n` counts as one break). */
const LINE_BREAKS = new Set([0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029]);

export function isSpace(ch: string): boolean {
  return WHITESPACE.has(ch.charCodeAt(0));
}

/** `s.splitlines()`. */
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

/** `s.split()` with no separator: runs of whitespace separate, empty pieces dropped. */
export function splitWhitespace(s: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (const ch of s) {
    if (isSpace(ch)) {
      if (current) parts.push(current);
      current = "";
    } else current += ch;
  }
  if (current) parts.push(current);
  return parts;
}

/** The code points of a string, one string each (Python indexes and iterates strings by code point). */
export function codePoints(s: string): string[] {
  return Array.from(s);
}

/** `s.strip(chars)`; whitespace when `chars` is undefined. */
export function strip(s: string, chars?: string): string {
  return rstrip(lstrip(s, chars), chars);
}

export function lstrip(s: string, chars?: string): string {
  const drop = stripper(chars);
  let start = 0;
  while (start < s.length && drop(s[start]!)) start++;
  return s.slice(start);
}

export function rstrip(s: string, chars?: string): string {
  const drop = stripper(chars);
  let end = s.length;
  while (end > 0 && drop(s[end - 1]!)) end--;
  return s.slice(0, end);
}

function stripper(chars: string | undefined): (ch: string) => boolean {
  return chars === undefined ? isSpace : (ch) => chars.includes(ch);
}

/** `len(s)`: the number of code points. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    n++;
  }
  return n;
}
