import { PyException } from "@envace/python-text";

// The lexical half of the expression parser (`syntax.ts` is the other): Python's tokens, with
// string literals decoded as Python decodes them, numbers kept as their text.

/** Text that is not a Python expression of the supported kind. */
export class PySyntaxError extends PyException {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super("SyntaxError", `${message} (at offset ${offset})`);
  }
}

/**
 * One token. Every kind has every field (`text` of a name, number or operator; `value` and
 * `bytes` of a string literal), so that the parser reads tokens of one shape and V8 keeps its
 * property accesses monomorphic.
 */
export interface Token {
  readonly type: "name" | "number" | "string" | "op" | "end";
  readonly text: string;
  readonly value: string;
  readonly bytes: boolean;
  readonly start: number;
  /** Just past the token's last character. */
  readonly end: number;
}

const makeToken = (type: "name" | "number" | "op" | "end", text: string, start: number): Token => ({
  type,
  text,
  value: "",
  bytes: false,
  start,
  end: start + text.length,
});

const OPERATORS = [
  "**",
  "//",
  "<<",
  ">>",
  "<=",
  ">=",
  "==",
  "!=",
  "->",
  ":=",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ",",
  ":",
  ".",
  ";",
  "=",
  "+",
  "-",
  "*",
  "/",
  "%",
  "@",
  "&",
  "|",
  "^",
  "~",
  "<",
  ">",
];
/** The operators by their first character, longest first as in `OPERATORS`: one lookup per token, not a scan. */
const OPERATORS_BY_FIRST = new Map<string, string[]>();
for (const op of OPERATORS) OPERATORS_BY_FIRST.set(op[0]!, [...(OPERATORS_BY_FIRST.get(op[0]!) ?? []), op]);

const NUMBER =
  /(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*\.(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*[eE][+-]?[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*)[jJ]?/y;
const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const STRING_PREFIX = /(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?(?='|")/y;

const isAsciiNameStart = (code: number): boolean => (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95;
const isAsciiNamePart = (code: number): boolean => isAsciiNameStart(code) || (code >= 48 && code <= 57);

/** The identifier at `pos`: scanned directly while it is ASCII, by the Unicode pattern otherwise. */
function nameAt(source: string, pos: number): string | undefined {
  if (!isAsciiNameStart(source.charCodeAt(pos))) return source.charCodeAt(pos) < 128 ? undefined : matchAt(NAME, source, pos);
  let end = pos + 1;
  while (end < source.length && isAsciiNamePart(source.charCodeAt(end))) end++;
  return end < source.length && source.charCodeAt(end) >= 128 ? matchAt(NAME, source, pos) : source.slice(pos, end);
}

/** Match a sticky pattern at `pos`. */
function matchAt(pattern: RegExp, source: string, pos: number): string | undefined {
  pattern.lastIndex = pos;
  return pattern.exec(source)?.[0];
}

/**
 * The punctuation of calls and literals (brackets, `,`, `=`, `.`, `:`), read by character code;
 * undefined for every other operator, which `OPERATORS_BY_FIRST` finds.
 */
function commonOperatorAt(source: string, pos: number): string | undefined {
  switch (source.charCodeAt(pos)) {
    case 0x28:
      return "(";
    case 0x29:
      return ")";
    case 0x5b:
      return "[";
    case 0x5d:
      return "]";
    case 0x7b:
      return "{";
    case 0x7d:
      return "}";
    case 0x2c:
      return ",";
    case 0x3d:
      return source.charCodeAt(pos + 1) === 0x3d ? "==" : "=";
    case 0x2e:
      return source.startsWith("...", pos) ? "..." : ".";
    case 0x3a:
      return source.charCodeAt(pos + 1) === 0x3d ? ":=" : ":";
    default:
      return undefined;
  }
}

const isQuote = (code: number): boolean => code === 0x27 || code === 0x22;
export const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** Whether a string literal's prefix can start with this character (`r'…'`, `b"…"`, `f'…'`, `u'…'`, `rb'…'`). */
function isPrefixStart(code: number): boolean {
  switch (code | 0x20) {
    case 0x72: // r
    case 0x62: // b
    case 0x66: // f
    case 0x75: // u
      return true;
    default:
      return false;
  }
}

/**
 * The prefix of a string literal starting at `pos` ("" for a bare quote), or undefined when none
 * starts there: what `STRING_PREFIX` matches, without a pattern match for every name that starts
 * with one of the prefix letters.
 */
function stringPrefixAt(source: string, pos: number): string | undefined {
  const code = source.charCodeAt(pos);
  if (isQuote(code)) return "";
  if (!isPrefixStart(code)) return undefined;
  if (isQuote(source.charCodeAt(pos + 1))) return source[pos]!;
  if (!isQuote(source.charCodeAt(pos + 2))) return undefined;
  return matchAt(STRING_PREFIX, source, pos);
}

/** A run of decimal digits not followed by what would make it another kind of number, or undefined. */
function plainIntegerAt(source: string, pos: number): string | undefined {
  let end = pos;
  while (end < source.length && isDigit(source.charCodeAt(end))) end++;
  if (end === pos) return undefined;
  const next = source[end];
  if (next !== undefined && ".eEjJxXoObB_".includes(next)) return undefined;
  return source.slice(pos, end);
}

/** The tokens of `source`, ending in an `end` token; a character no token can start is a `PySyntaxError`. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < source.length) {
    const code = source.charCodeAt(pos);
    // Space, \t, \n, \v, \f, \r.
    if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) {
      pos++;
      continue;
    }
    if (code === 0x5c && (source.charCodeAt(pos + 1) === 0x0a || (source.charCodeAt(pos + 1) === 0x0d && source.charCodeAt(pos + 2) === 0x0a))) {
      pos += source.charCodeAt(pos + 1) === 0x0a ? 2 : 3;
      continue;
    }
    if (code === 0x23) {
      while (pos < source.length && source.charCodeAt(pos) !== 0x0a) pos++;
      continue;
    }
    const prefix = stringPrefixAt(source, pos);
    if (prefix !== undefined) {
      const token = readString(source, pos, prefix);
      tokens.push(token);
      pos = token.end;
      continue;
    }
    if (isDigit(code) || (code === 0x2e && isDigit(source.charCodeAt(pos + 1)))) {
      const text = plainIntegerAt(source, pos) ?? matchAt(NUMBER, source, pos)!;
      tokens.push(makeToken("number", text, pos));
      pos += text.length;
      continue;
    }
    const name = nameAt(source, pos);
    if (name !== undefined) {
      tokens.push(makeToken("name", name, pos));
      pos += name.length;
      continue;
    }
    const common = commonOperatorAt(source, pos);
    if (common !== undefined) {
      tokens.push(makeToken("op", common, pos));
      pos += common.length;
      continue;
    }
    const ch = source[pos]!;
    const op = OPERATORS_BY_FIRST.get(ch)?.find((candidate) => source.startsWith(candidate, pos));
    if (op === undefined) throw new PySyntaxError(`invalid character ${JSON.stringify(ch)}`, pos);
    tokens.push(makeToken("op", op, pos));
    pos += op.length;
  }
  tokens.push(makeToken("end", "", source.length));
  return tokens;
}

function readString(source: string, start: number, prefix: string): Token {
  let raw = false;
  let bytes = false;
  if (prefix !== "") {
    const flags = prefix.toLowerCase();
    raw = flags.includes("r");
    bytes = flags.includes("b");
    if (flags.includes("f")) throw new PySyntaxError("f-strings are not supported", start);
  }
  let pos = start + prefix.length;
  const quoteCode = source.charCodeAt(pos);
  const triple = source.charCodeAt(pos + 1) === quoteCode && source.charCodeAt(pos + 2) === quoteCode;
  const quote = triple ? source.slice(pos, pos + 3) : source[pos]!;
  pos += quote.length;
  let value = "";
  for (;;) {
    // The run of characters up to the next quote, backslash or line break, copied at once.
    let end = pos;
    while (end < source.length) {
      const code = source.charCodeAt(end);
      if (code === quoteCode || code === 0x5c || code === 0x0a) break;
      end++;
    }
    if (end > pos) {
      value += source.slice(pos, end);
      pos = end;
    }
    if (pos >= source.length) throw new PySyntaxError("unterminated string literal", start);
    if (triple ? source.startsWith(quote, pos) : source.charCodeAt(pos) === quoteCode)
      return { type: "string", text: "", value, bytes, start, end: pos + quote.length };
    const ch = source[pos]!;
    if (ch === "\n" && !triple) throw new PySyntaxError("unterminated string literal", start);
    if (ch !== "\\") {
      value += ch;
      pos++;
      continue;
    }
    const next = source[pos + 1];
    if (next === undefined) throw new PySyntaxError("unterminated string literal", start);
    if (raw) {
      // A raw string keeps the backslash; it only stops the next character from ending the string.
      value += ch + next;
      pos += 2;
      continue;
    }
    const [text, length] = escapeSequence(source, pos, bytes);
    value += text;
    pos += length;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "\n": "",
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

function escapeSequence(source: string, pos: number, bytes: boolean): [string, number] {
  const next = source[pos + 1]!;
  const simple = SIMPLE_ESCAPES[next];
  if (simple !== undefined) return [simple, 2];
  if (next >= "0" && next <= "7") {
    const digits = /^[0-7]{1,3}/.exec(source.slice(pos + 1))![0];
    return [String.fromCodePoint(parseInt(digits, 8)), 1 + digits.length];
  }
  const widths: Record<string, number> = bytes ? { x: 2 } : { x: 2, u: 4, U: 8 };
  const width = widths[next];
  if (width !== undefined) {
    const hex = source.slice(pos + 2, pos + 2 + width);
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) throw new PySyntaxError(`truncated \\${next} escape`, pos);
    const code = parseInt(hex, 16);
    if (code > 0x10ffff) throw new PySyntaxError(`illegal Unicode character in \\${next} escape`, pos);
    return [String.fromCodePoint(code), 2 + width];
  }
  if (next === "N" && !bytes) throw new PySyntaxError("\\N{...} escapes are not supported", pos);
  // Python keeps an unknown escape as written (with a warning).
  return [`\\${next}`, 2];
}
