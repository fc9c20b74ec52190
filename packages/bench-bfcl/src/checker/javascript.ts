import { PyException, pyFloat, PyHashDict, pyInt, type PyObject } from "@envace/python-text";
import { bracketed, indexBefore, onLine, skipSpace } from "./scan.js";
import { intFloatOrText, JAVASCRIPT_TYPES } from "./types.js";

/**
 * Upstream's conversion of JavaScript-syntax argument strings (`"'abc'"`, `"[1, 2]"`,
 * `"{key: 'v'}"`, `"12n"`) into Python values before type and value checks. Anything that does
 * not look like the declared type stays a string; the regular expressions follow upstream's.
 */
const END = String.raw`\n?$`;
const INTEGER = new RegExp(String.raw`^-?\d+${END}`);
const FLOAT = new RegExp(String.raw`^-?\d+(\.\d+)?${END}`);
const BIGINT = new RegExp(String.raw`^-?\d+n${END}`);

export function convertJavaScript(value: string, type: string, itemType?: string): PyObject {
  if (!Object.hasOwn(JAVASCRIPT_TYPES, type)) throw new PyException("ValueError", `Unsupported type: ${type}`);
  switch (type) {
    case "String":
      return isQuoted(value) ? value.slice(1, -1) : value;
    case "integer":
      return INTEGER.test(value) ? pyInt(value) : value;
    case "float":
      return FLOAT.test(value) ? pyFloat(value) : value;
    case "Bigint":
      return BIGINT.test(value) ? pyInt(value.slice(0, -1)) : value;
    case "Boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "dict":
      return parseDict(value.trim());
    case "array":
      return parseArray(value.trim(), itemType);
    default:
      return value;
  }
}

function isQuoted(text: string): boolean {
  return (text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"));
}

/**
 * What upstream's patterns find, each undefined where its pattern does not match: the insides of a
 * 2-D array's rows, the inside of a flat array, the key and value texts of a dict. The scanners
 * below find it in linear time; the converters' test plugs in upstream's expressions instead.
 */
export interface JavaScriptPatterns {
  readonly arrayRows: (code: string) => string[] | undefined;
  readonly arrayBody: (code: string) => string | undefined;
  readonly dictPairs: (code: string) => [string, string][] | undefined;
}

const SCANNERS: JavaScriptPatterns = {
  arrayRows: (code) => {
    const nested = nestedArrays(code);
    return nested === undefined ? undefined : bracketed(nested);
  },
  arrayBody: (code) => flatArray(code),
  dictPairs: (code) => {
    if (!code.startsWith("{")) return undefined;
    const end = onLine(code, "}", 1);
    return end === -1 ? undefined : dictPairs(code.slice(1, end));
  },
};

/** Upstream's array conversion: rows' items read without a type, a flat array's items as `itemType`. */
export function parseArray(code: string, itemType: string | undefined, patterns: JavaScriptPatterns = SCANNERS): PyObject {
  try {
    const rows = patterns.arrayRows(code);
    if (rows !== undefined) {
      return rows.map((inside, index) => {
        let text = inside.trim();
        if (index === 0 && text.startsWith("[")) text = text.slice(1);
        return text.split(",").map((element) => parseJavaScriptValue(element.trim()));
      });
    }
    const body = patterns.arrayBody(code)?.trim();
    if (body === undefined) return code;
    const elements = body === "" ? [] : body.split(",");
    return elements.map((element) => {
      const text = element.trim();
      if (itemType === undefined) return parseJavaScriptValue(text);
      return text.startsWith("'") || text.startsWith('"') ? convertJavaScript(text, itemType, "String") : convertJavaScript(text, itemType);
    });
  } catch (error) {
    // Upstream falls back to the raw text when any item fails to convert.
    if (error instanceof PyException) return code;
    throw error;
  }
}

/**
 * What upstream's 2-D pattern matches at the start of `code`:
 * `^(?:\[\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\]|\bnew\s+Array\(\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\))`.
 */
function nestedArrays(code: string): string | undefined {
  let first: number;
  let close: string;
  if (code.startsWith("[")) {
    first = skipSpace(code, 1);
    close = "]";
  } else {
    const open = /^new\s+Array\(/.exec(code);
    if (!open) return undefined;
    first = skipSpace(code, open[0].length);
    close = ")";
  }
  if (code[first] !== "[") return undefined;
  const end = firstRowsEnd(code, first + 1, close);
  return end === -1 ? undefined : code.slice(0, end);
}

/**
 * Where the expression's backtracking search ends when rows start at `start` (just past a row's
 * `[`): each row ends at some `]` on its line, then whitespace, then `,` and the next row, or
 * `close`. The search takes the first `]` of a row from which the rest succeeds; `ends[i]` is
 * that outcome (the index past `close`, or -1) for a row whose text starts at `i`, filled from the
 * right so each `]` is weighed once.
 */
function firstRowsEnd(code: string, start: number, close: string): number {
  const ends = new Int32Array(code.length + 1).fill(-1);
  for (let i = code.length - 1; i >= start; i--) {
    if (code[i] === "\n") continue; // a row never spans a newline: -1
    ends[i] = code[i] === "]" ? afterRow(code, i, close, ends) : -1;
    if (ends[i] === -1) ends[i] = ends[i + 1]!;
  }
  return ends[start]!;
}

/** The outcome when a row ends at the `]` at `at`: `close` ends the match, `,` opens the next row. */
function afterRow(code: string, at: number, close: string, ends: Int32Array): number {
  const next = skipSpace(code, at + 1);
  if (code[next] === close) return next + 1;
  if (code[next] !== ",") return -1;
  const open = skipSpace(code, next + 1);
  return code[open] === "[" ? ends[open + 1]! : -1;
}

/** The inside of upstream's flat pattern `^(?:\[([^\n]*?)\]|\bnew\s+Array\(([^\n]*?)\))`. */
function flatArray(code: string): string | undefined {
  let from: number;
  let close: string;
  if (code.startsWith("[")) {
    from = 1;
    close = "]";
  } else {
    const open = /^new\s+Array\(/.exec(code);
    if (!open) return undefined;
    from = open[0].length;
    close = ")";
  }
  const end = onLine(code, close, from);
  return end === -1 ? undefined : code.slice(from, end);
}

/** Upstream's dict conversion: nested arrays and dicts converted, other values read without a type. */
export function parseDict(code: string, patterns: JavaScriptPatterns = SCANNERS): PyObject {
  if (code === "{}") return new PyHashDict();
  const pairs = patterns.dictPairs(code);
  if (pairs === undefined) return code;
  const dict = new PyHashDict();
  for (const [rawKey, rawValue] of pairs) {
    const key = stripChars(rawKey.trim(), "'\"");
    const value = rawValue.trim();
    if (value.startsWith("[") && value.endsWith("]")) dict.set(key, parseArray(value, undefined, patterns));
    else if (value.startsWith("{") && value.endsWith("}")) dict.set(key, parseDict(value, patterns));
    else dict.set(key, parseJavaScriptValue(stripChars(value, "'\"")));
  }
  return dict;
}

/**
 * The key and value texts upstream's `/([^:]+):\s*([^\n]*?)(?:,\s*(?=[^,]+:)|$)/g` finds in a
 * dict's inside (one line): a key runs to the next `:`; its value to the end, or to the first `,`
 * whose next comma-free stretch holds a `:` after its first character.
 */
export function dictPairs(body: string): [string, string][] {
  const pairs: [string, string][] = [];
  let at = 0;
  for (;;) {
    while (body[at] === ":") at++;
    const colon = body.indexOf(":", at);
    if (colon === -1) return pairs;
    const valueStart = skipSpace(body, colon + 1);
    let comma = body.indexOf(",", valueStart);
    let next = -1;
    while (comma !== -1) {
      next = pairStart(body, comma + 1);
      if (next !== -1) break;
      comma = body.indexOf(",", comma + 1);
    }
    pairs.push([body.slice(at, colon), body.slice(valueStart, comma === -1 ? body.length : comma)]);
    if (comma === -1) return pairs;
    at = next;
  }
}

/** Where `\s*(?=[^,]+:)` ends when tried at `from` (just past a comma), or -1 when it fails. */
function pairStart(body: string, from: number): number {
  let stretchEnd = body.indexOf(",", from);
  if (stretchEnd === -1) stretchEnd = body.length;
  const colon = indexBefore(body, ":", from + 1, stretchEnd);
  if (colon === -1) return -1;
  // The greedy `\s*` keeps all the whitespace unless the only colon of the stretch comes right after it.
  const spaced = skipSpace(body, from);
  if (colon > spaced) return spaced;
  return indexBefore(body, ":", spaced + 1, stretchEnd) !== -1 ? spaced : spaced - 1;
}

function stripChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text[start]!)) start++;
  while (end > start && chars.includes(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/** A JavaScript literal read without knowing its declared type. */
export function parseJavaScriptValue(input: string): PyObject {
  const text = input.trim();
  if (text === "true") return true;
  if (text === "false") return false;
  if (isQuoted(text)) return text.slice(1, -1);
  return intFloatOrText(text);
}
