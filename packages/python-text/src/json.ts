import { floatRepr } from "./float.js";

/**
 * The leaves of Python's `json.dumps` with its defaults (`ensure_ascii=True`,
 * `allow_nan=True`). The walk over lists and dicts (`", "` between items, `": "` after keys;
 * `","` at line ends with `indent`) belongs to whoever models Python's values: it is short, and
 * it is where value models differ (how an int is told from a float, what a dict is).
 */

/** Printable ASCII other than `"` and `\`: the only characters `json.dumps` writes as they are. */
const NEEDS_ESCAPE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

/**
 * `json.dumps(s)` for a `str`: quoted; `"` and `\` and the five short control escapes
 * backslashed; every other character outside printable ASCII (DEL included) as `\u00e9`,
 * lowercase, one per UTF-16 unit, so `😀` becomes the surrogate pair `\ud83d\ude00`.
 */
export function jsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e && code !== 0x22 && code !== 0x5c) out += s.charAt(i);
    else out += SHORT_ESCAPES[s[i]!] ?? `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

/** Control characters, `"` and `\`: what `json.dumps(s, ensure_ascii=False)` escapes. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it escapes
const NEEDS_ESCAPE_UNICODE = /[\x00-\x1f"\\]/;

/**
 * `json.dumps(s, ensure_ascii=False)` for a `str`: only `"`, `\` and control characters below
 * U+0020 are escaped (the five short escapes, else `\u001f`); everything else, DEL and non-ASCII
 * included, is written as it is.
 */
export function jsonStringUnicode(s: string): string {
  if (!NEEDS_ESCAPE_UNICODE.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code >= 0x20 && code !== 0x22 && code !== 0x5c) out += s.charAt(i);
    else out += SHORT_ESCAPES[s[i]!] ?? `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

/** `json.dumps(x)` for a float: its `repr`, or `NaN`, `Infinity`, `-Infinity` (not JSON, but Python writes them). */
export function jsonFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  return floatRepr(x);
}
